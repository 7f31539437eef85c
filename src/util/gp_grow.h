/*
 * gp_grow.h - room for one more element in an array that doubles as it fills. Every growing list
 * of the library and the tool grows this way; out of memory, the array is left as it was, so the
 * caller keeps what it had and decides what to give up.
 */
#ifndef GPUPRIO_GROW_H
#define GPUPRIO_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* items (capacity *cap elements of size bytes) with room for element n: as it was, or grown
 * (first: the first capacity); NULL when out of memory, items untouched. */
static inline void *gp_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t c = *cap ? *cap * 2 : first;
    void *grown = realloc(items, c * size);
    if (grown)
        *cap = c;
    return grown;
}

#endif /* GPUPRIO_GROW_H */
