/* scope_dep.c - a library only reachable through scope_caller's local scope (see lookup.c). */
int scope_private_value(void);
int scope_private_value(void)
{
    return 42;
}
