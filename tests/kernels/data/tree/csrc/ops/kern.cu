// Test fixture: the CUDA side, a kernel and its launcher.
#include <torch/extension.h>
#include <cuda_runtime.h>

template <typename T>
__global__ void scale_kernel(T *x, T alpha, int64_t n)
{
	int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * alpha;
}

at::Tensor scale_cuda(at::Tensor input, double alpha)
{
	auto x = input.contiguous();
	AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "scale_cuda", [&] {
		scale_kernel<scalar_t><<<(x.numel() + 255) / 256, 256>>>(
			x.data_ptr<scalar_t>(), static_cast<scalar_t>(alpha), x.numel());
	});
	return x;
}
