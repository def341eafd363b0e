/* SPDX-License-Identifier: MIT */
/* The CLI's bridge to the libclang kernel scanner (src/cli/scan-kernels.c). */
#ifndef DTL_CLI_SCAN_KERNELS_H
#define DTL_CLI_SCAN_KERNELS_H

#include <stdbool.h>
#include <stdio.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/rules/ops.h"

/* Loads libclang (DTYPELINT_LIBCLANG or the configured path), scans dirs and fills an op oracle
 * for DT701; *ret_kernels is for print/fini. -ENOTSUP in a build without libclang; a libclang
 * that cannot be loaded is an error without a file ("dtypelint: error: ..."). With progress,
 * the files scanned of the files found are shown on standard error in place (for a terminal),
 * and wiped before it returns. budget_s: the scan's wall-clock budget in seconds (0: none;
 * negative: the scanner's default). */
int dtl_cli_kernels_scan(const char *const *dirs, size_t n, bool progress, int budget_s,
                         struct dtl_arena *arena, struct dtl_op_oracle *ret_oracle,
                         void **ret_kernels, struct dtl_error *error);
void dtl_cli_kernels_fini(void *kernels);
/* --scan-kernels: the contracts as text or versioned JSON */
int dtl_cli_kernels_print(FILE *out, void *kernels, bool json, struct dtl_error *error);

#endif
