/* SPDX-License-Identifier: MIT */
/* dtypelint's public API: everything the CLI uses. */
#ifndef DTYPELINT_DTYPELINT_H
#define DTYPELINT_DTYPELINT_H
#ifndef DTL_SEES_CLI
#error "dtypelint/dtypelint.h is in the cli layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/arena.h"
#include "dtypelint/behavior.h"
#include "dtypelint/compose.h"
#include "dtypelint/diag.h"
#include "dtypelint/doc.h"
#include "dtypelint/dtype.h"
#include "dtypelint/glob.h"
#include "dtypelint/lint.h"
#include "dtypelint/limits.h"
#include "dtypelint/manifest.h"
#include "dtypelint/memory.h"
#include "dtypelint/plan.h"
#include "dtypelint/report.h"
#include "dtypelint/rules.h"
#include "dtypelint/sim.h"
#include "dtypelint/source.h"
#include "dtypelint/version.h"

#endif
