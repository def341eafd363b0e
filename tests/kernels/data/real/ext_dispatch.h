// Test fixture written for dtypelint's real-extension test: a project dispatch wrapper whose
// name understates what it covers (it also takes BFloat16), like DeepSpeed's
// DISPATCH_DOUBLE_FLOAT_AND_HALF.
#pragma once

#define DTL_DISPATCH_FLOAT_AND_HALF(TYPE, NAME, ...)                               \
	switch (TYPE) {                                                            \
	case at::ScalarType::Float: {                                              \
		using scalar_t = float;                                            \
		__VA_ARGS__();                                                     \
		break;                                                             \
	}                                                                          \
	case at::ScalarType::Half: {                                               \
		using scalar_t = at::Half;                                         \
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
