/* weave_framework.h - the framework a woven assembly was built for, and whether the run-time's
 * live metrics (the Meter "LockTime", System.Diagnostics.Metrics) can exist on it. */
#ifndef WEAVE_FRAMEWORK_H
#define WEAVE_FRAMEWORK_H

#include <stddef.h>

#include "image.h"

/* The framework img's assembly names in its TargetFrameworkAttribute (the
 * attribute on the Assembly row, II.22.10, matched by type name; its value
 * blob a prolog 0x0001 then one SerString, II.23.3), e.g.
 * ".NETCoreApp,Version=v8.0", into buf[0..size) (truncated, NUL-terminated
 * when size > 0); "" when it has none.  Returns 0, or -1 with LT_E_METADATA
 * for a row or blob that cannot be read, LT_E_NOMEM (weave_names_init). */
int weave_target_framework(const struct img *img, char *buf, size_t size);

/* Whether the run-time's Meter can exist on `framework` (as
 * weave_target_framework gives it): 1 for .NETCoreApp 6 and later, which have
 * System.Diagnostics.Metrics; 0 for earlier .NETCoreApp and for .NETFramework,
 * which do not (the run-time then makes none, silently); -1 when the program
 * that loads the assembly decides (.NETStandard, another or no framework). */
int weave_framework_metrics(const char *framework);

#endif
