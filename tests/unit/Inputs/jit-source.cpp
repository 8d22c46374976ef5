// A C++ --source file for the host JIT tests: the kernel's name is mangled.
template <typename T> static T twice(T X) { return X + X; }

void scale(float *v, int n, float by) {
  for (int i = 0; i < n; ++i)
    v[i] = twice(v[i]) * by;
}
