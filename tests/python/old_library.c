/*
 * old_library.c - python_old_library: a stand-in for a gpuprio library older than the Python
 * package, for python.old_library: it exports gpuprio_version ("0.0.1") and some of the API, but
 * not gpuprio_runtime_path, which the package needs. Its functions are never called but the
 * version. Built without the sanitizers: it is loaded into Debian's interpreter.
 */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *gpuprio_version(void);
EXPORT const char *gpuprio_version(void)
{
    return "0.0.1";
}

EXPORT int gpuprio_thread_set_priority(int priority);
EXPORT int gpuprio_thread_set_priority(int priority)
{
    (void)priority;
    return -38; /* -ENOSYS */
}
