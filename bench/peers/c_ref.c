/* The workloads in plain C: the loops a C programmer writes first, adjoints by hand.
   Built with cc -O3 -march=native -ffp-contract=off (no FMA contraction, no fast-math),
   so sums keep their order and results match the other peers to rounding. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R 0.999999
#define DT 0.01
#define DAMPING 0.5

void w1(const double *xs, long n, double *ys) {
    double c = 0.0;
    for (long i = 0; i < n; i++) {
        c = c * R + sin(xs[i]);
        ys[i] = c;
    }
}

void w2(const double *xs, long n, double *g) {
    double ct = 1.0; /* d(final c)/d(c after step i), walking back from the last step */
    for (long i = n - 1; i >= 0; i--) {
        g[i] = ct * cos(xs[i]);
        ct *= R;
    }
}

/* The transpose of a rows x cols matrix, so that a matrix-vector product can run as a sum
   of scaled columns: the loop over rows is then contiguous and vectorizes without
   reordering any sum. The caller frees it. */
static double *transposed(const double *m, long rows, long cols) {
    double *t = malloc(rows * cols * sizeof(double));
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++) t[j * rows + i] = m[i * cols + j];
    return t;
}

/* z += m v, with mt the transpose of m (cols x rows) */
static void add_matvec(double *z, const double *mt, const double *v, long rows, long cols) {
    for (long j = 0; j < cols; j++)
        for (long i = 0; i < rows; i++) z[i] += mt[j * rows + i] * v[j];
}

/* hs has t + 1 rows: h0, then the state after each step */
void rnn(const double *W, const double *U, const double *b, const double *xs,
         const double *h0, long t, long h, long d, double *hs) {
    double *Wt = transposed(W, h, h), *Ut = transposed(U, h, d);
    memcpy(hs, h0, h * sizeof(double));
    for (long s = 0; s < t; s++) {
        double *z = hs + (s + 1) * h;
        memcpy(z, b, h * sizeof(double));
        add_matvec(z, Wt, hs + s * h, h, h);
        add_matvec(z, Ut, xs + s * d, h, d);
        for (long i = 0; i < h; i++) z[i] = tanh(z[i]);
    }
    free(Wt);
    free(Ut);
}

/* gW, gU, gb must be zeroed; gh and dz are scratch of size h */
void rnn_adjoint(const double *W, const double *xs, const double *hs, long t, long h, long d,
                 double *gW, double *gU, double *gb, double *gh, double *dz) {
    for (long i = 0; i < h; i++) gh[i] = 1.0;
    for (long s = t - 1; s >= 0; s--) {
        const double *prev = hs + s * h, *next = hs + (s + 1) * h, *x = xs + s * d;
        for (long i = 0; i < h; i++) {
            dz[i] = gh[i] * (1.0 - next[i] * next[i]);
            gb[i] += dz[i];
            for (long j = 0; j < h; j++) gW[i * h + j] += dz[i] * prev[j];
            for (long j = 0; j < d; j++) gU[i * d + j] += dz[i] * x[j];
        }
        for (long j = 0; j < h; j++) gh[j] = 0.0;
        for (long i = 0; i < h; i++)
            for (long j = 0; j < h; j++) gh[j] += W[i * h + j] * dz[i];
    }
}

/* returns -1, or the first lane still running after max_steps */
long newton(const double *a, long n, long max_steps, double *x) {
    for (long i = 0; i < n; i++) {
        double xi = a[i], ai = a[i];
        long k = 0;
        while (!(fabs(xi * xi - ai) <= 1e-12 * ai)) {
            if (k++ == max_steps) return i;
            xi = (xi + ai / xi) / 2;
        }
        x[i] = xi;
    }
    return -1;
}

/* HT: Newton for log a from x0, x' = x - 1 + a exp(-x), each lane its own loop */
long heavy_tail(const double *a, const double *x0, long n, double tol, long max_steps,
                double *x) {
    for (long i = 0; i < n; i++) {
        double xi = x0[i], ai = a[i];
        long k = 0;
        while (!(fabs(ai * exp(-xi) - 1.0) <= tol)) {
            if (k++ == max_steps) return i;
            xi = xi - 1.0 + ai * exp(-xi);
        }
        x[i] = xi;
    }
    return -1;
}

/* MB: the steps z -> z*z + c takes from 0 to |z| > 2, at most max_steps, with complex.h */
void mandelbrot(const double complex *c, long n, long max_steps, long *steps) {
    for (long i = 0; i < n; i++) {
        double complex z = 0.0;
        long k = 0;
        while (!(cabs(z) > 2.0) && k < max_steps) {
            z = z * z + c[i];
            k++;
        }
        steps[i] = k;
    }
}

/* implicit function theorem on r = x*x - a: da = -(dr/dx)^-1 (dr/da) = 1 / (2x) */
long newton_grad(const double *a, long n, long max_steps, double *g) {
    long failed = newton(a, n, max_steps, g);
    for (long i = 0; i < n; i++) g[i] = 1.0 / (2.0 * g[i]);
    return failed;
}

/* gW must be zeroed; cs is scratch of (t + 1) * h, zs of t * h, gc and dz of h */
void deep_grad(const double *W, const double *xs, const double *c0, long t, long h,
               double *gW, double *cs, double *zs, double *gc, double *dz) {
    double *Wt = transposed(W, h, h);
    memcpy(cs, c0, h * sizeof(double));
    for (long s = 0; s < t; s++) {
        double *z = zs + s * h;
        memcpy(z, xs + s * h, h * sizeof(double));
        add_matvec(z, Wt, cs + s * h, h, h);
        for (long i = 0; i < h; i++) cs[(s + 1) * h + i] = tanh(sin(z[i]));
    }
    free(Wt);
    for (long i = 0; i < h; i++) gc[i] = 1.0;
    for (long s = t - 1; s >= 0; s--) {
        for (long i = 0; i < h; i++) {
            double c = cs[(s + 1) * h + i];
            dz[i] = gc[i] * (1.0 - c * c) * cos(zs[s * h + i]);
            for (long j = 0; j < h; j++) gW[i * h + j] += dz[i] * cs[s * h + j];
        }
        for (long j = 0; j < h; j++) gc[j] = 0.0;
        for (long i = 0; i < h; i++)
            for (long j = 0; j < h; j++) gc[j] += W[i * h + j] * dz[i];
    }
}

/* W7: the state as two scalars, the way a C programmer keeps a small state */
void pendulum(const double *s0, const double *xs, long n, double *s, double *ys) {
    double th = s0[0], om = s0[1];
    for (long i = 0; i < n; i++) {
        double dth = om, dom = xs[i] - sin(th) - DAMPING * om;
        th = th + DT * dth;
        om = om + DT * dom;
        ys[i] = th;
    }
    s[0] = th;
    s[1] = om;
}

/* ST: sum(tanh(x)), in order */
double sum_tanh(const double *x, long n) {
    double total = 0.0;
    for (long i = 0; i < n; i++) total += tanh(x[i]);
    return total;
}

/* W8: x' = tanh(A x + b) for a COO matrix A, `steps` times */
void spmv_loop(const double *vals, const long *rows, const long *cols, long nnz,
               const double *x0, const double *b, long n, long steps, double *x, double *y) {
    for (long i = 0; i < n; i++) x[i] = x0[i];
    for (long t = 0; t < steps; t++) {
        for (long i = 0; i < n; i++) y[i] = b[i];
        for (long k = 0; k < nnz; k++) y[rows[k]] += vals[k] * x[cols[k]];
        for (long i = 0; i < n; i++) x[i] = tanh(y[i]);
    }
}

/* W8g: the gradient of sum(final x) w.r.t. vals; xs holds the (steps + 1) states */
void spmv_grad(const double *vals, const long *rows, const long *cols, long nnz,
               const double *x0, const double *b, long n, long steps, double *g,
               double *xs, double *gx, double *gy) {
    for (long i = 0; i < n; i++) xs[i] = x0[i];
    for (long t = 0; t < steps; t++) {
        double *x = xs + t * n, *next = xs + (t + 1) * n;
        for (long i = 0; i < n; i++) gy[i] = b[i];
        for (long k = 0; k < nnz; k++) gy[rows[k]] += vals[k] * x[cols[k]];
        for (long i = 0; i < n; i++) next[i] = tanh(gy[i]);
    }
    for (long k = 0; k < nnz; k++) g[k] = 0.0;
    for (long i = 0; i < n; i++) gx[i] = 1.0;
    for (long t = steps - 1; t >= 0; t--) {
        const double *x = xs + t * n, *next = xs + (t + 1) * n;
        for (long i = 0; i < n; i++) { gy[i] = gx[i] * (1.0 - next[i] * next[i]); gx[i] = 0.0; }
        for (long k = 0; k < nnz; k++) {
            g[k] += gy[rows[k]] * x[cols[k]];
            gx[cols[k]] += gy[rows[k]] * vals[k];
        }
    }
}

/* HS: the heat stencil in two buffers that swap, each point written once a step; the
   result lands in u (its last state is copied there if it ended in scratch) */
#define HEAT(name, real)                                                               \
    void name(const real *u0, long n, long steps, real k, real *u, real *scratch) {  \
        real *a = u, *b = scratch;                                                     \
        memcpy(a, u0, n * sizeof(real));                                               \
        for (long t = 0; t < steps; t++) {                                             \
            b[0] = a[0];                                                               \
            b[n - 1] = a[n - 1];                                                       \
            for (long i = 1; i < n - 1; i++)                                           \
                b[i] = a[i] + k * (a[i - 1] - (real)2 * a[i] + a[i + 1]);              \
            real *swap = a;                                                            \
            a = b;                                                                     \
            b = swap;                                                                  \
        }                                                                              \
        if (a != u) memcpy(u, a, n * sizeof(real));                                    \
    }
HEAT(heat, double)
HEAT(heatf, float)

/* KF: 4x4 products, S = H P H' + R by Cholesky, K = (S^-1 H P)', x += K (z - H x),
   P -= K H P; out = (x, P) */
/* c = a b, b read at b[sk k + sj j]: (4, 1) for b, (1, 4) for b' (gcc unrolls both) */
static inline void mm4(const double *a, const double *b, double *c, int sk, int sj) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += a[4 * i + k] * b[sk * k + sj * j];
            c[4 * i + j] = s;
        }
}

void kalman(const double *F, const double *Q, const double *H, const double *Rn,
            const double *zs, long t, const double *x0, const double *P0, double *out) {
    double x[4], P[16], T[16], S[16], HP[16], L[16], K[16], xp[4], y[4];
    for (int i = 0; i < 4; i++) x[i] = x0[i];
    for (int i = 0; i < 16; i++) P[i] = P0[i];
    for (long s = 0; s < t; s++) {
        for (int i = 0; i < 4; i++) {
            xp[i] = 0.0;
            for (int k = 0; k < 4; k++) xp[i] += F[4 * i + k] * x[k];
        }
        mm4(F, P, T, 4, 1);
        mm4(T, F, P, 1, 4);
        for (int i = 0; i < 16; i++) P[i] += Q[i];
        mm4(H, P, HP, 4, 1);
        mm4(HP, H, S, 1, 4);
        for (int i = 0; i < 16; i++) S[i] += Rn[i];
        for (int j = 0; j < 4; j++) {  /* S = L L' */
            double d = S[5 * j];
            for (int k = 0; k < j; k++) d -= L[4 * j + k] * L[4 * j + k];
            L[5 * j] = sqrt(d);
            for (int i = j + 1; i < 4; i++) {
                double v = S[4 * i + j];
                for (int k = 0; k < j; k++) v -= L[4 * i + k] * L[4 * j + k];
                L[4 * i + j] = v / L[5 * j];
            }
        }
        for (int c = 0; c < 4; c++) {  /* column c of S^-1 HP, stored as row c of K */
            double w[4];
            for (int i = 0; i < 4; i++) {
                double v = HP[4 * i + c];
                for (int k = 0; k < i; k++) v -= L[4 * i + k] * w[k];
                w[i] = v / L[5 * i];
            }
            for (int i = 3; i >= 0; i--) {
                double v = w[i];
                for (int k = i + 1; k < 4; k++) v -= L[4 * k + i] * K[4 * c + k];
                K[4 * c + i] = v / L[5 * i];
            }
        }
        for (int i = 0; i < 4; i++) {
            y[i] = zs[4 * s + i];
            for (int k = 0; k < 4; k++) y[i] -= H[4 * i + k] * xp[k];
        }
        for (int i = 0; i < 4; i++) {
            x[i] = xp[i];
            for (int k = 0; k < 4; k++) x[i] += K[4 * i + k] * y[k];
        }
        mm4(K, HP, T, 4, 1);
        for (int i = 0; i < 16; i++) P[i] -= T[i];
    }
    for (int i = 0; i < 4; i++) out[i] = x[i];
    for (int i = 0; i < 16; i++) out[4 + i] = P[i];
}
