/* SPDX-License-Identifier: MIT */
/* dtypelint's public API: everything the CLI uses. */
#ifndef DTYPELINT_DTYPELINT_H
#define DTYPELINT_DTYPELINT_H
#ifndef DTL_SEES_CLI
#error "dtypelint/cli/dtypelint.h is in the cli layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/core/arena.h"
#include "dtypelint/model/behavior.h"
#include "dtypelint/model/compose.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/input/doc.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/core/glob.h"
#include "dtypelint/lint/lint.h"
#include "dtypelint/core/limits.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/sim/memory.h"
#include "dtypelint/model/plan.h"
#include "dtypelint/report/report.h"
#include "dtypelint/rules/rules.h"
#include "dtypelint/sim/sim.h"
#include "dtypelint/input/source.h"
#include "dtypelint/core/version.h"

#endif
