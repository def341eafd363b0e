// Test fixture written for dtypelint: a CUDA-side dispatch wrapper whose name understates it.
#pragma once
#define TREE_DISPATCH(TYPE, NAME, ...)                                             \
	switch (TYPE) {                                                            \
	case at::ScalarType::Float: {                                              \
		using scalar_t = float;                                            \
		__VA_ARGS__();                                                     \
		break;                                                             \
	}                                                                          \
	case at::ScalarType::BFloat16: {                                           \
		using scalar_t = at::BFloat16;                                     \
		__VA_ARGS__();                                                     \
		break;                                                             \
	}                                                                          \
	default: AT_ERROR(#NAME, " not implemented for '", toString(TYPE), "'"); \
	}
