// Test fixture: the XPU copy of the wrapper, same name, different dtypes.
#pragma once
#define TREE_DISPATCH(TYPE, NAME, ...)                                             \
	switch (TYPE) {                                                            \
	case at::ScalarType::Half: {                                               \
		using scalar_t = at::Half;                                         \
		__VA_ARGS__();                                                     \
		break;                                                             \
	}                                                                          \
	default: AT_ERROR(#NAME, " not implemented for '", toString(TYPE), "'"); \
	}
