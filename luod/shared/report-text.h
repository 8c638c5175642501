/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The update report as `luoctl report` prints it: the reading side of
 * report.json (luod's GetReport returns that file, or the report in memory,
 * as JSON text; report.h builds it). */

#include <stdio.h>

/* Prints the report in text (one JSON object; members that are missing or
 * of another type print as "-" or 0) to f.  Returns 0, or -EBADMSG when
 * text is not JSON or not an object (nothing printed). */
int report_text_print(FILE *f, const char *text);

