/*
 * lookalike.c - a library that is no GPU runtime but defines functions under names the shims
 * intercept (hipLaunchKernel, cuLaunchKernel), a name with a runtime's prefix that no shim
 * intercepts, and a C++-mangled name: lookups through its handle must be libc's answers, never
 * a wrapper, and must not make gpuprio load a runtime (lookup_rules.c).
 */
int hipLaunchKernel(void);
int cuLaunchKernel(void);
int hipLookalikeOnly(void);
int cuLookalikeOnly(void);
int lookalike_probe(void) __asm__("_ZN9lookalike5probeEv");

int hipLaunchKernel(void)
{
    return 1;
}

int cuLaunchKernel(void)
{
    return 2;
}

int hipLookalikeOnly(void)
{
    return 3;
}

int cuLookalikeOnly(void)
{
    return 4;
}

int lookalike_probe(void)
{
    return 5;
}
