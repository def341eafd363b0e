// Test fixture: pybind11 bindings of the CUDA ops.
#include <torch/extension.h>
#include "shim.h"

at::Tensor scale_cuda(at::Tensor input, double alpha);

at::Tensor scale(at::Tensor input, double alpha)
{
	TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
	return scale_cuda(input, alpha);
}

void fill(at::Tensor out)
{
	TREE_DISPATCH(out.scalar_type(), "fill", [&] { out.zero_(); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.def("scale", &scale, "scale a tensor");
	m.def("fill", &fill);
}
