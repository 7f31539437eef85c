/*
 * dependent.c - a library that needs the GPU runtime (DT_NEEDED), as a framework's does:
 * lookups through its handle search its dependencies, so an intercepted name resolves to the
 * runtime's own function there, and the shim hands out its wrapper (lookup_rules.c).
 */
int dependent_marker(void);

int dependent_marker(void)
{
    return 42;
}
