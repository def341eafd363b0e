// Hidden directories are not scanned.
void ignored(at::Tensor x) { AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "ignored", [&] {}); }
PYBIND11_MODULE(x, m) { m.def("ignored", &ignored); }
