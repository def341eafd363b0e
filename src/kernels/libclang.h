/* SPDX-License-Identifier: MIT */
/*
 * libclang, loaded with dlopen() when a kernel option is used (issue 6). Linking it cost every
 * run ~40 ms and ~45 MB of libLLVM start-up, although most runs lint a manifest only.
 *
 * struct dtl_libclang is a table of pointers to the clang_* functions the scanner calls, filled
 * by dlsym(); the types come from <clang-c/Index.h>, so a call through lc->tokenize(...) is
 * checked exactly as clang_tokenize(...) was. The table is not global: whoever loads it owns it
 * (dtl_kernels_init(), from options.libclang_path or dtl_kernels_libclang_default_path()); the
 * scanner reaches it through k->scanner->lc and struct kfile.lc.
 *
 * Private to src/kernels (and its white-box tests): not part of the public headers in include/.
 */
#ifndef DTL_KERNELS_LIBCLANG_H
#define DTL_KERNELS_LIBCLANG_H

#include <clang-c/Index.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/kernels/kernels.h"

/* Every clang_* function the scanner calls, without its prefix. */
#define DTL_LIBCLANG_FUNCTIONS(X)                                                                  \
	/* set.c: the index */                                                                     \
	X(createIndex)                                                                             \
	X(disposeIndex)                                                                            \
	/* parse.c: one translation unit and its main file's tokens */                             \
	X(parseTranslationUnit2)                                                                   \
	X(disposeTranslationUnit)                                                                  \
	X(getNumDiagnostics)                                                                       \
	X(getFile)                                                                                 \
	X(getFileContents)                                                                         \
	X(getFileName)                                                                             \
	X(getInclusions)                                                                           \
	X(getSkippedRanges)                                                                        \
	X(disposeSourceRangeList)                                                                  \
	X(getLocationForOffset)                                                                    \
	X(getRange)                                                                                \
	X(getRangeStart)                                                                           \
	X(getRangeEnd)                                                                             \
	X(getSpellingLocation)                                                                     \
	X(tokenize)                                                                                \
	X(disposeTokens)                                                                           \
	X(getTokenKind)                                                                            \
	X(getTokenExtent)                                                                          \
	X(getCString)                                                                              \
	X(disposeString)                                                                           \
	/* macros.c: the preprocessing record */                                                   \
	X(getTranslationUnitCursor)                                                                \
	X(visitChildren)                                                                           \
	X(getCursor)                                                                               \
	X(getCursorKind)                                                                           \
	X(getCursorSpelling)                                                                       \
	X(getCursorExtent)                                                                         \
	X(getCursorReferenced)                                                                     \
	X(equalCursors)                                                                            \
	X(Cursor_isMacroBuiltin)                                                                   \
	X(Cursor_isMacroFunctionLike)

struct dtl_libclang {
	void *handle;     /* from dlopen(); NULL when not loaded */
	const char *path; /* as given to dtl_kernels_libclang_open(): borrowed */
#define DTL_LIBCLANG_MEMBER(name) __typeof__(clang_##name) *name;
	DTL_LIBCLANG_FUNCTIONS(DTL_LIBCLANG_MEMBER)
#undef DTL_LIBCLANG_MEMBER
};

/* The libclang found at configure time (meson: llvm-config --libdir, -Dlibclang_path). */
const char *dtl_kernels_libclang_default_path(void);

/* dlopen()s path (the default when NULL) and resolves every function. On failure *lc stays
 * unloaded and error names the library and dlerror()'s text: -ENOENT when it cannot be loaded,
 * -ENOSYS when a function is missing. The message has no file location (loc.file ""). */
int dtl_kernels_libclang_open(struct dtl_libclang *lc, const char *path, struct dtl_error *error);
/* Accepts an unloaded (zeroed) table. */
void dtl_kernels_libclang_close(struct dtl_libclang *lc);

#endif
