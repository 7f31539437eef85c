/*
 * misversioned.c - a library that exports hipMalloc in the wrong version node (hip_5.0 instead
 * of hip_4.2), the mistake that makes applications silently bypass a shim. check-exports.sh must
 * reject it; the test is what shows that the export check can fail.
 */
#include <stddef.h>

int hipMalloc(void **ptr, size_t size);

int hipMalloc(void **ptr, size_t size)
{
    (void)size;
    *ptr = NULL;
    return 0;
}
