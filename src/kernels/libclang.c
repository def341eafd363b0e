/* SPDX-License-Identifier: MIT */
/* Loading libclang on first use (libclang.h): dlopen() plus one dlsym() per function. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "libclang.h"

#ifndef DTL_LIBCLANG_PATH
#error "DTL_LIBCLANG_PATH (the libclang to dlopen) comes from meson.build"
#endif

/*
 * RTLD_NODELETE: dtl_kernels_libclang_close() drops our reference but libclang and libLLVM stay
 * mapped until exit. Unmapping them would run libLLVM's static destructors for nothing (the process
 * is about to end), and the heap their globals still point to would turn, for LeakSanitizer and
 * valgrind, from "still reachable" into leaks without a module to suppress them by
 * (tests/valgrind.supp matches obj:*libLLVM-*.so*). LLVM's own builds already link both with
 * -z nodelete (Debian 12: FLAGS_1 NODELETE in readelf -d); the flag makes it hold for any
 * libclang given in DTYPELINT_LIBCLANG. A second open, as in each unit test, is then a reference
 * count, not a reload.
 */
#ifdef RTLD_NODELETE
#define DTL_RTLD_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
#else
#define DTL_RTLD_FLAGS (RTLD_NOW | RTLD_LOCAL)
#endif

const char *dtl_kernels_libclang_default_path(void)
{
	return DTL_LIBCLANG_PATH;
}

int dtl_kernels_libclang_open(struct dtl_libclang *lc, const char *path, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	const char *why;
	void *sym;

	memset(lc, 0, sizeof(*lc));
	if (!path)
		path = dtl_kernels_libclang_default_path();
	dlerror();
	lc->handle = dlopen(path, DTL_RTLD_FLAGS);
	if (!lc->handle) {
		why = dlerror();
		return dtl_error_set(error, nowhere, -ENOENT, "cannot load libclang '%s': %s", path,
		                     why ? why : "unknown error");
	}
	lc->path = path;
	/* POSIX guarantees that dlsym()'s void * converts to a function pointer. */
#define DTL_LIBCLANG_RESOLVE(name)                                                                 \
	dlerror();                                                                                 \
	sym = dlsym(lc->handle, "clang_" #name);                                                   \
	if (!sym)                                                                                  \
		goto missing;                                                                      \
	lc->name = (__typeof__(lc->name))sym;
	DTL_LIBCLANG_FUNCTIONS(DTL_LIBCLANG_RESOLVE)
#undef DTL_LIBCLANG_RESOLVE
	return 0;

missing:
	why = dlerror();
	/* glibc: "PATH: undefined symbol: clang_NAME" */
	dtl_error_set(error, nowhere, -ENOSYS, "'%s' is not a usable libclang: %s", path,
	              why ? why : "a clang_* function is missing");
	dtl_kernels_libclang_close(lc);
	return -ENOSYS;
}

void dtl_kernels_libclang_close(struct dtl_libclang *lc)
{
	if (lc->handle)
		dlclose(lc->handle);
	memset(lc, 0, sizeof(*lc));
}
