/*
 * dl_override.h - what a platform shim provides to the dlsym/dlvsym override (dl_override.c).
 */
#ifndef GPUPRIO_DL_OVERRIDE_H
#define GPUPRIO_DL_OVERRIDE_H

/*
 * Called after libc's dlsym or dlvsym found sym (not NULL) for name on a real handle (not
 * RTLD_DEFAULT or RTLD_NEXT): returns the shim's wrapper when sym is the bound runtime's own
 * function of that name, else sym unchanged.
 */
void *gp_shim_wrap_lookup(const char *name, void *sym);

#endif /* GPUPRIO_DL_OVERRIDE_H */
