// Test fixture written for dtypelint's real-extension test (tests/kernels/real-ext.py): a CPU
// torch extension whose ops accept and reject dtypes in every way the kernel scanner reads.
// The test builds it against the installed libtorch and checks that torch raises exactly what
// dtypelint predicts. Nothing here is copied from another project.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "ext_dispatch.h"

at::Tensor disp_half(const at::Tensor &x)
{
	AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "disp_half_cpu", [&] {
		const scalar_t *p = x.data_ptr<scalar_t>();
		(void)p;
	});
	return x.clone();
}

at::Tensor disp_bf16(const at::Tensor &x)
{
	AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "disp_bf16_cpu",
					[&] {
						const scalar_t *p = x.data_ptr<scalar_t>();
						(void)p;
					});
	return x.clone();
}

at::Tensor disp_all(const at::Tensor &x)
{
	AT_DISPATCH_ALL_TYPES(x.scalar_type(), "disp_all_cpu", [&] { (void)sizeof(scalar_t); });
	return x.clone();
}

at::Tensor check_float(const at::Tensor &x)
{
	TORCH_CHECK(x.scalar_type() == at::kFloat, "check_float: x must be float32, got ",
		    x.scalar_type());
	return x.clone();
}

at::Tensor check_alias(const at::Tensor &x)
{
	auto dt = x.dtype();
	TORCH_CHECK(dt == at::kHalf || dt == c10::ScalarType::BFloat16,
		    "check_alias: need a 16-bit float, got ", dt);
	return x.clone();
}

at::Tensor no_msg(const at::Tensor &x)
{
	TORCH_CHECK(x.scalar_type() == at::kDouble);
	return x.clone();
}

at::Tensor accessor_float(const at::Tensor &x)
{
	const float *p = x.data_ptr<float>();
	(void)p;
	return x.clone();
}

at::Tensor wrapper(const at::Tensor &x)
{
	DTL_DISPATCH_FLOAT_AND_HALF(x.scalar_type(), "wrapper", [&] { (void)sizeof(scalar_t); });
	return x.clone();
}

static void launcher(const at::Tensor &t)
{
	AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), "deep_launcher", [&] { (void)sizeof(scalar_t); });
}

static void helper(int repeat, const at::Tensor &y)
{
	for (int i = 0; i < repeat; i++)
		launcher(y.contiguous());
}

at::Tensor deep(const at::Tensor &x)
{
	helper(1, x);
	return x.clone();
}

at::Tensor branch(const at::Tensor &x)
{
	if (x.scalar_type() == at::kHalf) {
		return x.clone();
	} else if (x.scalar_type() == at::kFloat) {
		return x.clone();
	} else {
		TORCH_CHECK(false, "branch: unsupported dtype ", x.scalar_type());
	}
	return x;
}

at::Tensor switchop(const at::Tensor &x)
{
	switch (x.scalar_type()) {
	case at::kInt:
	case at::kLong:
		return x.clone();
	default:
		AT_ERROR("switchop: ", c10::toString(x.scalar_type()), " is not a wide integer type");
	}
}

at::Tensor not_double(const at::Tensor &x)
{
	TORCH_CHECK(x.dtype() != c10::kDouble, "not_double: float64 is not supported");
	return x.clone();
}

at::Tensor need_half(const at::Tensor &x)
{
	if (x.scalar_type() != at::kHalf) {
		AT_ERROR("need_half: got ", x.scalar_type());
	}
	return x.clone();
}

at::Tensor floating(const at::Tensor &x)
{
	TORCH_CHECK(x.is_floating_point(), "floating: x must be a floating point tensor");
	return x.clone();
}

at::Tensor dual_cpu(const at::Tensor &x)
{
	AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "dual_cpu", [&] { (void)sizeof(scalar_t); });
	return x.clone();
}

TORCH_LIBRARY(dtl_real, m)
{
	m.def("disp_half", &disp_half);
	m.def("disp_bf16", &disp_bf16);
	m.def("disp_all", &disp_all);
	m.def("check_float", &check_float);
	m.def("check_alias", &check_alias);
	m.def("no_msg", &no_msg);
	m.def("accessor_float", &accessor_float);
	m.def("wrapper", &wrapper);
	m.def("deep", &deep);
	m.def("branch", &branch);
	m.def("switchop", &switchop);
	m.def("not_double", &not_double);
	m.def("need_half", &need_half);
	m.def("floating", &floating);
	m.def("dual(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(dtl_real, CPU, m)
{
	m.impl("dual", &dual_cpu);
}
