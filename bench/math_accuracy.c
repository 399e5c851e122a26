// Accuracy of the compiled math approximations against libm: a dense sweep
// of f32 bit patterns (every STRIDE-th, all exponents, both signs) plus the
// special values (+-0, +-inf, NaN, denormals, the largest finite). The
// reference is libm's double function rounded to f32; the error is in ulps
// of that f32 and against PyTorch's f32 tolerance (rtol 1.3e-6, atol 1e-5).
// Built and run by bench/math_accuracy.py; prints one line per function.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, size, stride;
} Memref1D;

#define FN(name) void _mlir_ciface_approx_##name(Memref1D *, Memref1D *);
FN(exp) FN(expm1) FN(tanh) FN(erf) FN(log) FN(log1p) FN(log2) FN(sin) FN(cos)
FN(atan) FN(erfc)
#undef FN

typedef void (*Approx)(Memref1D *, Memref1D *);
typedef struct {
  const char *name;
  Approx approx;
  double (*ref)(double);
  float (*libm)(float);
} Case;

static const Case kCases[] = {
    {"exp", _mlir_ciface_approx_exp, exp, expf},
    {"expm1", _mlir_ciface_approx_expm1, expm1, expm1f},
    {"tanh", _mlir_ciface_approx_tanh, tanh, tanhf},
    {"erf", _mlir_ciface_approx_erf, erf, erff},
    {"erfc", _mlir_ciface_approx_erfc, erfc, erfcf},
    {"log", _mlir_ciface_approx_log, log, logf},
    {"log1p", _mlir_ciface_approx_log1p, log1p, log1pf},
    {"log2", _mlir_ciface_approx_log2, log2, log2f},
    {"sin", _mlir_ciface_approx_sin, sin, sinf},
    {"cos", _mlir_ciface_approx_cos, cos, cosf},
    {"atan", _mlir_ciface_approx_atan, atan, atanf},
};

enum { kChunk = 1 << 20 };

static float fromBits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

// Distance in ulps of the f32 reference (denormal spacing below FLT_MIN).
static double ulpErr(float got, float want) {
  if (isnan(want))
    return isnan(got) ? 0 : INFINITY;
  if (isinf(want) || isinf(got) || isnan(got))
    return got == want ? 0 : INFINITY;
  double spacing = fabsf(want) < FLT_MIN ? ldexp(1, -149)
                                         : ldexp(1, ilogbf(want) - 23);
  return fabs((double)got - (double)want) / spacing;
}

// |got - want| over PyTorch's allowed difference; > 1 fails assert_close.
static double tolRatio(float got, float want) {
  if (isnan(want) || isinf(want) || isnan(got) || isinf(got))
    return (isnan(want) && isnan(got)) || got == want ? 0 : INFINITY;
  return fabs((double)got - (double)want) / (1e-5 + 1.3e-6 * fabs(want));
}

typedef struct {
  double maxUlp, maxUlpNormal, maxTol, libmUlp;
  float worstX;
  long count, specialFails;
} Stats;

static void check(const Case *c, const float *x, const float *y, long n,
                  int special, Stats *s) {
  for (long i = 0; i < n; ++i) {
    float want = (float)c->ref((double)x[i]);
    double u = ulpErr(y[i], want);
    double t = tolRatio(y[i], want);
    double l = ulpErr(c->libm(x[i]), want);
    if (u > s->maxUlp || (isnan(u) && !isnan(s->maxUlp))) {
      s->maxUlp = u;
      s->worstX = x[i];
    }
    if (fabsf(want) >= FLT_MIN && u > s->maxUlpNormal)
      s->maxUlpNormal = u;
    if (t > s->maxTol)
      s->maxTol = t;
    if (l > s->libmUlp)
      s->libmUlp = l;
    if (special && t > 1) {
      ++s->specialFails;
      fprintf(stderr, "  %s(%a) = %a, libm %a\n", c->name, x[i], y[i], want);
    }
  }
  s->count += n;
}

static void run(const Case *c, uint64_t stride, float *x, float *y) {
  Memref1D in = {x, x, 0, 0, 1}, out = {y, y, 0, 0, 1};
  Stats s = {0, 0, 0, 0, 0, 0, 0};
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN,
                            FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                            fromBits(1), fromBits(0x80000001u),
                            fromBits(0x007fffffu), 1.0f, -1.0f, 88.7f,
                            -103.0f, 1e-30f, 9.0f, -9.0f, 1e4f, 1e6f};
  long ns = sizeof(specials) / sizeof(specials[0]);
  memcpy(x, specials, sizeof(specials));
  in.size = out.size = ns;
  c->approx(&in, &out);
  check(c, x, y, ns, 1, &s);
  long n = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += stride) {
    x[n++] = fromBits((uint32_t)b);
    if (n == kChunk || b + stride >= (1ull << 32)) {
      in.size = out.size = n;
      c->approx(&in, &out);
      check(c, x, y, n, 0, &s);
      n = 0;
    }
  }
  printf("%-6s inputs %ld  max_ulp %.3g (at %a)  max_ulp_normal_results %.3g"
         "  max_err/tol %.3g  libm_f32_max_ulp %.3g  special_fails %ld\n",
         c->name, s.count, s.maxUlp, s.worstX, s.maxUlpNormal, s.maxTol,
         s.libmUlp, s.specialFails);
}

int main(int argc, char **argv) {
  uint64_t stride = argc > 1 ? strtoull(argv[1], 0, 0) : 61;
  float *x = malloc(kChunk * sizeof(float)), *y = malloc(kChunk * sizeof(float));
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i)
    if (argc <= 2 || strstr(argv[2], kCases[i].name))
      run(&kCases[i], stride, x, y);
  free(x);
  free(y);
  return 0;
}
