/* tool.h — what every ocx tool does alike at its end (the tools see only ocx.h). */
#ifndef OCX_TOOL_H
#define OCX_TOOL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* rc, or 1 when what the tool wrote to stdout did not reach its file (a full disk, a closed
 * pipe), which it says on stderr: "TOOL: writing WHAT: why". A usage asked for with --help counts
 * as output, as a report does. */
static inline int tool_flushed(const char *tool, const char *what, int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "%s: writing %s: %s\n", tool, what, strerror(errno));
    return 1;
}

#endif
