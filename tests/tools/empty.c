/*
 * empty.c - a library with nothing in it: run.sh puts it in LD_PRELOAD before `gpuprio run` to
 * see that what was there is kept (after gpuprio's own libraries).
 */
int tools_empty_marker(void);
int tools_empty_marker(void)
{
    return 0;
}
