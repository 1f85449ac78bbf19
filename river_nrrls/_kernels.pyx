# cython: language_level=3, boundscheck=False, wraparound=False
"""The narrow step of NR-RLS in a few compiled calls.

At the widths where the direct solve is the solver's path, the arithmetic of a prequential step
(predict, then learn) is a few microseconds, and the Python calls around it cost as much again:
one call to assemble M and r, one per BLAS or LAPACK routine, the item assignments of their
coefficients. These kernels do each part in one call, reading the statistics where
river_nrrls/_stats.py keeps them, with the BLAS and LAPACK that scipy links (cimported from
scipy.linalg.cython_blas and cython_lapack: Cython checks their C signatures at import):

- pair_weights: the two-class direct solve (class weights, M and r, one dposv);
- pair_matrix:  the two-class M alone (upper triangle), for the stale-factor path;
- each_weights: reweighted multiclass, every class's own system (M_k and r_k, one dposv each);
- conjugate_gradients: the stale-factor solver's preconditioned CG, whole, in one call;
- stale_append: a sample's Sherman-Morrison update of the stale factor's P^-1, in place;
- outputs:      the outputs w_k . x of every class (one dgemv), None when one is not finite;
- rank_one:     a sample's rank-1 update of its class's scatter (one dsyr);
- refill:       the dense vector of a sample with the features of the last one (the encoding's
                cache, river_nrrls/_index.py);
- pair_outputs: a whole two-class prediction (refill, pair_weights, outputs), optionally on one
                BLAS thread set in C (use_thread_setters);
- learn_remembered: a whole plain learn_one (refill, the load w |x|^2 against the range bound,
                rank_one).
- rls_learn:    RLSRegressor's whole plain learn_one (refill, the range bound, the scatter's
                dsyr, the QR update of its square-root factor R by one Householder reflection a
                column, the weights' dtrsv), river_nrrls/_fused_rls.py;
- rls_predict:  RLSRegressor's whole prediction (refill, one ddot);
- rls_add_row:  the QR update and the weights' solve alone (the general path's, so that a
                sample gives the same bits whichever path takes it).

Each computes the formulas of the Python path that it replaces (river_nrrls/_solver.py and
_stats.py), which stays for the fallbacks and is used when this module is not built; the
roundings differ in the last bits (as between two BLAS builds), which shows only in systems so
ill-conditioned that no solve is accurate there.

Memory safety. Every array argument is checked (dtype float64 or intp, dimensions, contiguity,
alignment, byte order, writability, shapes) before its data pointer is read, and every loop index
is bounded by the shapes so checked. The checks read the array's header (numpy's C API) rather than
acquire a typed memoryview, as scikit-learn's kernels do: an acquisition goes through the buffer
protocol, once per array and call, which at the narrow widths, where these calls run once a sample,
costs as much as a whole call; and a memoryview checks neither alignment nor a positive stride.
``refill`` walks the sample dict with borrowed references only while it runs no Python code and
allocates no Python object (exact str and int keys are compared in C, any other key that is not the
remembered object itself sends the sample to the Python path), so nothing can change the dict under
the walk; the array it allocates afterwards (which may run a collection's finalisers) is filled
from its own copy of the values, at columns read and bounded again. BLAS and LAPACK run without the
GIL from ``NOGIL_MIN_DIM`` columns on, where the call is long enough to pay for releasing it; the
arrays stay alive meanwhile (the caller's references).

Notation (algorithms page): the augmented scatter of class c is [n^c, s^c^T; s^c, A^c], kept in
column-major order in a (capacity, capacity, C) array, upper triangle authoritative. With the
class weights w_0 and w_1 (1/n^c for TER, 1 without reweighting, 0 for an empty class) and the
targets t_pos = tau + eta, t_rest = tau - eta:

    M   = w_0 A^0 + w_1 A^1 + b I            (over the columns first..dim-1)
    r_0 = t_pos w_0 s^0 + t_rest w_1 s^1     (row 0 of the scatters holds n^c and s^c)
    r_1 = t_rest w_0 s^0 + t_pos w_1 s^1     (r_1 = -r_0 when tau = 0: one right-hand side)

and the weights of class k solve M w_k = r_k.
"""

cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.limits cimport INT_MAX
from libc.math cimport INFINITY, NAN, copysign, hypot, isfinite, sqrt
from libc.string cimport memset
from scipy.linalg.cython_blas cimport daxpy, ddot, dgemv, dsymv, dsyr, dtrsv, sdot, ssymv, ssyr
from scipy.linalg.cython_lapack cimport dposv

cnp.import_array()

# Borrowed-reference accessors, declared on PyObject * so that Cython adds no reference counting
# (none of them runs Python code or allocates a Python object).
cdef extern from "Python.h":
    bint Exact_dict "PyDict_CheckExact"(object)
    Py_ssize_t Dict_size "PyDict_GET_SIZE"(object)
    bint Dict_next "PyDict_Next"(object, Py_ssize_t *, PyObject **, PyObject **)
    PyObject *Tuple_item "PyTuple_GET_ITEM"(object, Py_ssize_t)
    bint Exact_str "PyUnicode_CheckExact"(PyObject *)
    bint Exact_int "PyLong_CheckExact"(PyObject *)
    bint Exact_float "PyFloat_CheckExact"(PyObject *)
    int Str_compare "PyUnicode_Compare"(PyObject *, PyObject *)
    int Rich_compare_bool "PyObject_RichCompareBool"(PyObject *, PyObject *, int)
    double Float_value "PyFloat_AS_DOUBLE"(PyObject *)
    double Int_as_double "PyLong_AsDouble"(PyObject *)
    PyObject *Error_occurred "PyErr_Occurred"()
    void Error_clear "PyErr_Clear"()
    int Py_EQ

# From this many columns on, BLAS and LAPACK run without the GIL: their call is then long
# enough (several microseconds) that releasing the GIL and taking it back (about 0.1 us) is
# small beside it.
cdef enum:
    NOGIL_MIN_DIM = 128

#: NOGIL_MIN_DIM for Python (``pair_outputs(..., one_thread=True)`` takes fewer columns)
NOGIL_COLUMNS = NOGIL_MIN_DIM

# refill's verdicts on a sample
cdef enum:
    SAME_VALUES = 0  # the cached vector is the sample's
    NEW_VALUES = 1  # same keys, other values: a new vector
    NOT_MINE = 2  # anything else: the caller's validation takes it


# ----------------------------------------------------------------------------- argument checks


cdef int _check_float_array(cnp.ndarray array, int ndim, bint writable, str name) except -1:
    """A float64 array of ``ndim`` dimensions, column-major (Fortran) contiguous, aligned, in
    native byte order (and writable if asked), or an error."""
    if (
        cnp.PyArray_TYPE(array) != cnp.NPY_DOUBLE
        or cnp.PyArray_NDIM(array) != ndim
        or not cnp.PyArray_ISFARRAY_RO(array)
    ):
        raise TypeError(f"{name} must be a {ndim}-dimensional Fortran-ordered float64 array")
    if writable and not cnp.PyArray_ISWRITEABLE(array):
        raise ValueError(f"{name} must be writable")
    return 0


cdef int _increment(cnp.ndarray vector, str name) except -1:
    """The stride, counted in entries, of a float64 vector (one dimension, any positive stride
    of whole aligned entries, native byte order), or an error."""
    cdef Py_ssize_t stride = cnp.PyArray_STRIDES(vector)[0] if cnp.PyArray_NDIM(vector) == 1 else 0
    if (
        cnp.PyArray_TYPE(vector) != cnp.NPY_DOUBLE
        or cnp.PyArray_NDIM(vector) != 1
        or not cnp.PyArray_ISBEHAVED_RO(vector)
        or stride <= 0
        or stride % <Py_ssize_t>sizeof(double) != 0
        or stride // <Py_ssize_t>sizeof(double) > INT_MAX
    ):
        raise TypeError(f"{name} must be a float64 vector of positive stride")
    return <int>(stride // <Py_ssize_t>sizeof(double))


cdef int _check_pair(
    cnp.ndarray scatters, cnp.ndarray out, Py_ssize_t rows, Py_ssize_t columns, Py_ssize_t dim,
    Py_ssize_t first,
) except -1:
    """The two-class scatters (a (capacity, capacity, 2) array, read) and an output (a writable
    (rows, columns) array) for the columns ``first:dim``, or an error."""
    _check_float_array(scatters, 3, False, "scatters")
    _check_float_array(out, 2, True, "out")
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(scatters)
    cdef cnp.npy_intp *out_shape = cnp.PyArray_DIMS(out)
    if (
        shape[1] != shape[0] or shape[2] != 2 or dim > shape[0] or first < 0 or first >= dim
        or dim > INT_MAX or out_shape[0] != rows or out_shape[1] != columns
    ):
        raise ValueError("inconsistent shapes of the scatters and the output")
    return 0


cdef double *_scratch(double *small, Py_ssize_t small_size, Py_ssize_t size) except NULL:
    """Room for ``size`` doubles: ``small`` (the caller's stack array of ``small_size``) when
    it is enough, else a new block that the caller frees (PyMem_Free) when it is not small."""
    if size <= small_size:
        return small
    cdef double *block = <double *>PyMem_Malloc(size * sizeof(double))
    if block == NULL:
        raise MemoryError()
    return block


# ----------------------------------------------------------------------------- the two-class solve


cdef int _pair_solve(
    const double *scatter_0, const double *scatter_1, Py_ssize_t capacity, Py_ssize_t first,
    int n, double w_0, double w_1, double target_pos, double target_rest, bint opposite,
    double l2, double *matrix, double *rhs,
) noexcept nogil:
    """M (upper triangle) and r_0 (and r_1 unless ``opposite``) into ``matrix`` (n x n) and
    ``rhs`` (n x 2), column-major, then dposv: its info. Indices: j < n = dim - first and
    first + i <= first + j < dim <= capacity, inside each (capacity, capacity) scatter."""
    cdef int j, i, n_rhs = 1 if opposite else 2, info = 0
    cdef const double *column_0
    cdef const double *column_1
    cdef double *target
    cdef double sum_0, sum_1
    cdef char upper = b"U"
    for j in range(n):
        column_0 = scatter_0 + (first + j) * capacity
        column_1 = scatter_1 + (first + j) * capacity
        target = matrix + <Py_ssize_t>j * n
        for i in range(j + 1):  # M = w_0 A^0 + w_1 A^1 (upper triangle)
            target[i] = w_0 * column_0[first + i] + w_1 * column_1[first + i]
        target[j] += l2  # + b I
        sum_0 = column_0[0]  # s^0_j (row 0)
        sum_1 = column_1[0]  # s^1_j
        rhs[j] = target_pos * w_0 * sum_0 + target_rest * w_1 * sum_1  # r_0
        if not opposite:
            rhs[n + j] = target_rest * w_0 * sum_0 + target_pos * w_1 * sum_1  # r_1
    dposv(&upper, &n, &n_rhs, matrix, &n, rhs, &n, &info)  # M = U^T U; U^T U w = r
    return info


def pair_weights(
    cnp.ndarray scatters not None, Py_ssize_t dim, Py_ssize_t first, bint reweight, double tau,
    double eta, double l2, cnp.ndarray out not None,
):
    """pair_weights(scatters, dim, first, reweight, tau, eta, l2, out)

    Solve the two-class system from the (capacity, capacity, 2) Fortran array of augmented
    scatters into ``out``, a (2, dim) Fortran array (rows: the classes' weights, 0 before
    ``first``). Returns dposv's info: ``out`` is written only when it is 0.
    """
    return _pair_weights(scatters, dim, first, reweight, tau, eta, l2, out)


cdef int _pair_weights(
    cnp.ndarray scatters, Py_ssize_t dim, Py_ssize_t first, bint reweight, double tau,
    double eta, double l2, cnp.ndarray out,
) except -1000:
    """`pair_weights`: its arguments checked here, its info returned."""
    _check_pair(scatters, out, 2, dim, dim, first)
    cdef Py_ssize_t capacity = cnp.PyArray_DIMS(scatters)[0]
    cdef const double *scatter_0 = <const double *>cnp.PyArray_DATA(scatters)
    cdef const double *scatter_1 = scatter_0 + capacity * capacity
    cdef double n_0 = scatter_0[0], n_1 = scatter_1[0]  # the class masses n^0, n^1
    cdef double w_0, w_1  # the class weights; an empty side gets 0
    if reweight:
        w_0 = 1.0 / n_0 if n_0 > 0.0 else 0.0  # 1/n^0
        w_1 = 1.0 / n_1 if n_1 > 0.0 else 0.0  # 1/n^1
    else:
        w_0 = 1.0 if n_0 > 0.0 else 0.0
        w_1 = 1.0 if n_1 > 0.0 else 0.0
    cdef bint opposite = tau == 0.0  # r_1 = -r_0: one right-hand side
    cdef int n = <int>(dim - first), info, j
    cdef double *matrix = <double *>PyMem_Malloc((<size_t>n * n + 2 * <size_t>n) * sizeof(double))
    if matrix == NULL:
        raise MemoryError()
    cdef double *rhs = matrix + <size_t>n * n  # column-major (n, 2): r_0, then r_1
    cdef double *weights
    info = 0
    try:
        if n >= NOGIL_MIN_DIM:
            with nogil:
                info = _pair_solve(scatter_0, scatter_1, capacity, first, n, w_0, w_1,
                                   tau + eta, tau - eta, opposite, l2, matrix, rhs)
        else:
            info = _pair_solve(scatter_0, scatter_1, capacity, first, n, w_0, w_1,
                               tau + eta, tau - eta, opposite, l2, matrix, rhs)
        if info == 0:
            weights = <double *>cnp.PyArray_DATA(out)  # (2, dim) column-major: w_k[j] at k + 2 j
            memset(weights, 0, 2 * <size_t>first * sizeof(double))
            for j in range(n):  # 2 (first + j) + 1 < 2 dim: inside out
                weights[2 * (first + j)] = rhs[j]
                weights[2 * (first + j) + 1] = -rhs[j] if opposite else rhs[n + j]  # w_1 = -w_0
    finally:
        PyMem_Free(matrix)
    return info


cdef void _pair_matrix(
    const double *scatter_0, const double *scatter_1, Py_ssize_t capacity, Py_ssize_t first,
    Py_ssize_t n, double w_0, double w_1, double l2, double *matrix,
) noexcept nogil:
    """M's upper triangle into ``matrix`` (n x n, column-major). Indices: i <= j < n and
    first + i <= first + j < dim <= capacity, inside each (capacity, capacity) scatter."""
    cdef Py_ssize_t j, i
    cdef const double *column_0
    cdef const double *column_1
    cdef double *target
    for j in range(n):
        column_0 = scatter_0 + (first + j) * capacity + first
        column_1 = scatter_1 + (first + j) * capacity + first
        target = matrix + j * n
        for i in range(j + 1):  # M = w_0 A^0 + w_1 A^1 (upper triangle)
            target[i] = w_0 * column_0[i] + w_1 * column_1[i]
        target[j] += l2  # + b I


def pair_matrix(
    cnp.ndarray scatters not None, Py_ssize_t dim, Py_ssize_t first, double w_0, double w_1,
    double l2, cnp.ndarray out not None,
):
    """pair_matrix(scatters, dim, first, w_0, w_1, l2, out)

    M = w_0 A^0 + w_1 A^1 + b I over the columns ``first:dim`` of the (capacity, capacity, 2)
    Fortran array of augmented scatters, into the upper triangle of ``out``, a square Fortran
    array of ``dim - first`` columns (its lower triangle is left as it was).
    """
    _check_pair(scatters, out, dim - first, dim - first, dim, first)
    cdef Py_ssize_t capacity = cnp.PyArray_DIMS(scatters)[0]
    cdef const double *scatter_0 = <const double *>cnp.PyArray_DATA(scatters)
    _pair_matrix(scatter_0, scatter_0 + capacity * capacity, capacity, first, dim - first, w_0,
                 w_1, l2, <double *>cnp.PyArray_DATA(out))


# ----------------------------------------------------------------------------- reweighted multiclass


cdef int _each_solve(
    const double *scatters, Py_ssize_t capacity, Py_ssize_t n_classes, Py_ssize_t first, int n,
    const double *own, const double *rest, double target_pos, double target_rest, double l2,
    double *total, double *matrix, double *rhs, double *out,
) noexcept nogil:
    """Every class's own system M_k w_k = r_k (reweighted multiclass), solved in turn into the
    (C, dim) column-major ``out`` (columns first..dim-1); the first non-zero dposv info, or 0.

    ``total`` (n x n, then n) receives T = sum_j A^j and S = sum_j s^j; ``matrix`` (n x n) and
    ``rhs`` (n) each class's M_k and r_k. Indices: i <= j < n, first + j < dim <= capacity inside
    every (capacity, capacity) scatter; in ``out`` (C rows, dim = first + n columns) entry
    k + C (first + j) < C dim."""
    cdef Py_ssize_t k, c, i, j, stride = capacity * capacity
    cdef const double *scatter
    cdef const double *column
    cdef double *target
    cdef double *source
    cdef double *sums = total + <Py_ssize_t>n * n
    cdef double own_k, rest_k, scale
    cdef int one = 1, info = 0
    cdef char upper = b"U"
    memset(total, 0, (<size_t>n * n + <size_t>n) * sizeof(double))
    for c in range(n_classes):  # T = sum_j A^j (upper triangle), S = sum_j s^j
        scatter = scatters + c * stride
        for j in range(n):
            column = scatter + (first + j) * capacity + first
            target = total + j * n
            for i in range(j + 1):
                target[i] += column[i]
            sums[j] += scatter[(first + j) * capacity]  # s^c_j (row 0)
    for k in range(n_classes):
        own_k, rest_k = own[k], rest[k]  # w_k = 1/n^k, w_rest = 1/n^rest (0 if empty)
        scatter = scatters + k * stride
        if own_k >= rest_k:
            # M_k = w_rest T + (w_k - w_rest) A^k: two coefficients >= 0, nothing cancels
            scale = own_k - rest_k
            for j in range(n):
                column = scatter + (first + j) * capacity + first
                source = total + j * n
                target = matrix + j * n
                for i in range(j + 1):
                    target[i] = rest_k * source[i] + scale * column[i]
                target[j] += l2  # + b I
                # r_k = t_pos w_k s^k + t_rest w_rest (S - s^k)
                rhs[j] = ((target_pos * own_k - target_rest * rest_k)
                          * scatter[(first + j) * capacity] + target_rest * rest_k * sums[j])
        else:
            # The class heavier than its rest (at most one): T - A^k would cancel the digits of
            # a small rest, so A^rest and s^rest are summed from the other classes directly.
            memset(matrix, 0, <size_t>n * n * sizeof(double))
            memset(rhs, 0, <size_t>n * sizeof(double))
            for c in range(n_classes):
                if c == k:
                    continue
                for j in range(n):
                    column = scatters + c * stride + (first + j) * capacity + first
                    target = matrix + j * n
                    for i in range(j + 1):
                        target[i] += column[i]
                    rhs[j] += scatters[c * stride + (first + j) * capacity]
            for j in range(n):
                column = scatter + (first + j) * capacity + first
                target = matrix + j * n
                for i in range(j + 1):  # M_k = w_k A^k + w_rest A^rest
                    target[i] = own_k * column[i] + rest_k * target[i]
                target[j] += l2  # + b I
                rhs[j] = (target_pos * own_k * scatter[(first + j) * capacity]
                          + target_rest * rest_k * rhs[j])
        dposv(&upper, &n, &one, matrix, &n, rhs, &n, &info)  # M_k = U^T U; U^T U w_k = r_k
        if info != 0:
            return info
        for j in range(n):  # w_k[first + j] at k + C (first + j): inside (C, dim)
            out[k + n_classes * (first + j)] = rhs[j]
    return 0


def each_weights(
    cnp.ndarray scatters not None, Py_ssize_t dim, Py_ssize_t first, double tau, double eta,
    double l2, cnp.ndarray out not None,
):
    """each_weights(scatters, dim, first, tau, eta, l2, out)

    Reweighted multiclass: every class's own TER system (w_k = 1/n^k, w_rest = 1/n^rest) from
    the (capacity, capacity, C) Fortran array of augmented scatters, solved into ``out``, a
    (C, dim) Fortran array (rows: the classes' weights, 0 before ``first``). Returns the first
    non-zero dposv info (a system not positive definite), 0 on success; ``out`` is meaningful
    only then.
    """
    _check_float_array(scatters, 3, False, "scatters")
    _check_float_array(out, 2, True, "out")
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(scatters)
    cdef cnp.npy_intp *out_shape = cnp.PyArray_DIMS(out)
    cdef Py_ssize_t capacity = shape[0], n_classes = shape[2], k, j
    if (
        shape[1] != capacity or dim > capacity or first < 0 or first >= dim or dim > INT_MAX
        or n_classes < 1 or out_shape[0] != n_classes or out_shape[1] != dim
    ):
        raise ValueError("inconsistent shapes of the scatters and the output")
    cdef const double *data = <const double *>cnp.PyArray_DATA(scatters)
    cdef int n = <int>(dim - first), info = 0
    cdef size_t square = <size_t>n * n
    # own[k] = w_k, rest[k] = w_rest; then T and S, M_k, r_k
    cdef double *block = <double *>PyMem_Malloc(
        (2 * <size_t>n_classes + 2 * square + 2 * <size_t>n) * sizeof(double))
    if block == NULL:
        raise MemoryError()
    cdef double *own = block
    cdef double *rest = block + n_classes
    cdef double *total = rest + n_classes
    cdef double *matrix = total + square + n
    cdef double *rhs = matrix + square
    cdef double *weights = <double *>cnp.PyArray_DATA(out)
    cdef double before, after
    try:
        # n^rest_k = (n^0 + ... + n^(k-1)) + (n^(k+1) + ...): sums of positive masses, no
        # cancellation (as ClassStatistics.rest_counts)
        before = 0.0
        for k in range(n_classes):
            rest[k] = before
            before += data[k * capacity * capacity]  # n^k
        after = 0.0
        for k in range(n_classes - 1, -1, -1):
            rest[k] += after
            after += data[k * capacity * capacity]
        for k in range(n_classes):
            before = data[k * capacity * capacity]
            own[k] = 1.0 / before if before > 0.0 else 0.0  # 1/n^k
            rest[k] = 1.0 / rest[k] if rest[k] > 0.0 else 0.0  # 1/n^rest
        memset(weights, 0, <size_t>n_classes * first * sizeof(double))
        if n >= NOGIL_MIN_DIM:
            with nogil:
                info = _each_solve(data, capacity, n_classes, first, n, own, rest, tau + eta,
                                   tau - eta, l2, total, matrix, rhs, weights)
        else:
            info = _each_solve(data, capacity, n_classes, first, n, own, rest, tau + eta,
                               tau - eta, l2, total, matrix, rhs, weights)
    finally:
        PyMem_Free(block)
    return info


# ----------------------------------------------------------------------------- stale-factor CG


cdef struct _CGSettings:
    double tolerance  # ||z|| <= this ||w||: the relative error estimate
    double backward  # ||D^-1 res|| <= this ||D w||: a direct solve's residual
    double contraction  # a residual ratio above it asks for a refactor
    int max_iterations
    double safe_low  # single precision: vectors of norms in [safe_low, safe_high] go as they are
    double safe_high


cdef struct _CGSpace:
    int n
    const double *matrix  # M (n x n, upper triangle), column-major ...
    int lda  # ... of this column stride (>= n: the leading block of a wider matrix)
    const void *inverse  # P^-1 (n x n, upper triangle), double or single
    bint single
    const double *root  # D = sqrt(diag M)
    double *residual
    double *direction
    double *image
    double *preconditioned
    float *single_in  # single-precision copies of a vector and of P^-1's product
    float *single_out


cdef bint _check_inverse(cnp.ndarray inverse, bint writable) except -1:
    """The stale factor's P^-1: a 2-dimensional Fortran-ordered float64 or float32 array (and
    writable if asked), or an error; True for single precision."""
    cdef int kind = cnp.PyArray_TYPE(inverse)
    if (
        (kind != cnp.NPY_DOUBLE and kind != cnp.NPY_FLOAT)
        or cnp.PyArray_NDIM(inverse) != 2
        or not cnp.PyArray_ISFARRAY_RO(inverse)
    ):
        raise TypeError("inverse must be a 2-dimensional Fortran-ordered float64 or float32 array")
    if writable and not cnp.PyArray_ISWRITEABLE(inverse):
        raise ValueError("inverse must be writable")
    return kind == cnp.NPY_FLOAT


cdef Py_ssize_t _column_stride(cnp.ndarray matrix, Py_ssize_t height) except -1:
    """The column stride, counted in entries, of a 2-dimensional float64 array whose columns
    are contiguous (unit row stride, aligned, native byte order) and at least ``height`` apart:
    a Fortran array or a leading block of one; or an error."""
    if (
        cnp.PyArray_TYPE(matrix) != cnp.NPY_DOUBLE
        or cnp.PyArray_NDIM(matrix) != 2
        or not cnp.PyArray_ISBEHAVED_RO(matrix)
        or cnp.PyArray_STRIDES(matrix)[0] != <Py_ssize_t>sizeof(double)
        or cnp.PyArray_STRIDES(matrix)[1] % <Py_ssize_t>sizeof(double) != 0
        or cnp.PyArray_STRIDES(matrix)[1] // <Py_ssize_t>sizeof(double) < max(height, 1)
    ):
        raise TypeError("matrix must be a column-major float64 array (columns contiguous)")
    return cnp.PyArray_STRIDES(matrix)[1] // <Py_ssize_t>sizeof(double)


cdef inline double _norm(const double *vector, int n) noexcept nogil:
    cdef int one = 1
    return sqrt(ddot(&n, <double *>vector, &one, <double *>vector, &one))


cdef inline bint _safe(double norm, const _CGSettings *settings) noexcept nogil:
    return settings.safe_low <= norm <= settings.safe_high


cdef void _apply(
    const _CGSpace *space, const double *vector, double factor, double norm,
    const _CGSettings *settings, double *out,
) noexcept nogil:
    """out = c P^-1 v in double precision, c = ``factor``, ||v|| = ``norm`` (as
    river_nrrls/_solver.py's ``_StaleFactor.apply``): in single precision, v enters as it is
    within the safe window of norms, else at unit norm with the product scaled back in double."""
    cdef int n = space.n, one = 1, i
    cdef char upper = b"U"
    cdef double zero = 0.0, scale
    cdef float alpha, beta = 0.0
    if not space.single:
        dsymv(&upper, &n, &factor, <double *>space.inverse, &n, <double *>vector, &one, &zero,
              out, &one)
        return
    if not norm < INFINITY:  # a non-finite v: CG gives up, and refactors
        for i in range(n):
            out[i] = NAN
        return
    if _safe(norm, settings):
        for i in range(n):
            space.single_in[i] = <float>vector[i]
        alpha = <float>factor
        ssymv(&upper, &n, &alpha, <float *>space.inverse, &n, space.single_in, &one, &beta,
              space.single_out, &one)
        for i in range(n):
            out[i] = space.single_out[i]
        if _safe(_norm(out, n), settings):
            return
    scale = norm if norm > 0.0 else 1.0
    for i in range(n):  # v / ||v||, divided in double before the cast
        space.single_in[i] = <float>(vector[i] * (1.0 / scale))
    alpha = 1.0
    ssymv(&upper, &n, &alpha, <float *>space.inverse, &n, space.single_in, &one, &beta,
          space.single_out, &one)
    scale = factor * scale
    for i in range(n):
        out[i] = space.single_out[i] * scale


cdef bint _at_rounding_level(const _CGSpace *space, const double *weights, double backward) \
        noexcept nogil:
    """||D^-1 res|| <= backward ||D w||: the residual a backward-stable direct solve leaves."""
    cdef double residual_sum = 0.0, weights_sum = 0.0, value
    cdef int i
    for i in range(space.n):
        value = space.residual[i] / space.root[i]
        residual_sum += value * value
        value = weights[i] * space.root[i]
        weights_sum += value * value
    return sqrt(residual_sum) <= backward * sqrt(weights_sum)


cdef int _cg(
    const _CGSpace *space, const double *rhs, int rhs_step, double *weights,
    double inverse_scale, const _CGSettings *settings, int *iterations, bint *refactor,
) noexcept nogil:
    """Preconditioned CG on M w = r from ``weights`` (updated in place), step for step the
    Python ``_conjugate_gradients`` of river_nrrls/_solver.py (which documents the tests): 1
    when it converged, 0 when it did not in ``max_iterations``."""
    cdef int n = space.n, lda = space.lda, one = 1, i, iteration
    cdef char upper = b"U"
    cdef double minus_one = -1.0, plus_one = 1.0, zero = 0.0
    cdef double norm, new_norm, size, floor, bound, product, new_product, step, largest = 0.0
    cdef double *residual = space.residual
    cdef double *direction = space.direction
    cdef double *image = space.image
    cdef double *preconditioned = space.preconditioned
    iterations[0] = 0
    for i in range(n):  # res = r - M w (r's entry i at i * rhs_step < n * rhs_step)
        residual[i] = rhs[<Py_ssize_t>i * rhs_step]
    dsymv(&upper, &n, &minus_one, <double *>space.matrix, &lda, weights, &one, &plus_one,
          residual, &one)
    norm = _norm(residual, n)
    size = _norm(weights, n)
    for i in range(n):
        if space.root[i] > largest:
            largest = space.root[i]
    floor = settings.backward * largest * largest  # the test with the largest diag M
    if norm <= floor * size and _at_rounding_level(space, weights, settings.backward):
        return 1
    bound = settings.tolerance * size
    _apply(space, residual, inverse_scale, norm, settings, preconditioned)  # z = (s P)^-1 res
    if _norm(preconditioned, n) <= bound:
        daxpy(&n, &plus_one, preconditioned, &one, weights, &one)  # w + z: the Richardson step
        return 1
    for i in range(n):
        direction[i] = preconditioned[i]  # p = z
    product = ddot(&n, residual, &one, preconditioned, &one)  # res . z
    for iteration in range(1, settings.max_iterations + 1):
        dsymv(&upper, &n, &plus_one, <double *>space.matrix, &lda, direction, &one, &zero, image,
              &one)  # q = M p
        step = product / ddot(&n, direction, &one, image, &one)  # alpha
        daxpy(&n, &step, direction, &one, weights, &one)  # w += alpha p
        step = -step
        daxpy(&n, &step, image, &one, residual, &one)  # res -= alpha q
        new_norm = _norm(residual, n)
        if new_norm > settings.contraction * norm:
            refactor[0] = True
        norm = new_norm
        iterations[0] = iteration
        if iteration == 1:  # ||w|| once more, in case the warm start was (near) zero
            size = _norm(weights, n)
            bound = settings.tolerance * size
        if norm <= floor * size and _at_rounding_level(space, weights, settings.backward):
            return 1
        _apply(space, residual, inverse_scale, norm, settings, preconditioned)
        if _norm(preconditioned, n) <= bound:
            daxpy(&n, &plus_one, preconditioned, &one, weights, &one)  # the Richardson step
            return 1
        new_product = ddot(&n, residual, &one, preconditioned, &one)
        step = new_product / product
        for i in range(n):  # p = z + beta p
            direction[i] = preconditioned[i] + step * direction[i]
        product = new_product
    return 0


def conjugate_gradients(
    cnp.ndarray matrix not None, cnp.ndarray rhs not None, cnp.ndarray weights not None,
    cnp.ndarray inverse not None, double inverse_scale, object root,
    double tolerance, double backward, double contraction, int max_iterations,
    double safe_low, double safe_high,
):
    """conjugate_gradients(matrix, rhs, weights, inverse, inverse_scale, root, tolerance,
    backward, contraction, max_iterations, safe_low, safe_high)

    The stale-factor solver's preconditioned CG (river_nrrls/_solver.py's
    ``_conjugate_gradients``, with its constants as arguments) on M w = r, M a square
    column-major float64 array (upper triangle; its columns may be further apart than its
    height: the leading block of a wider Fortran array), P^-1 (``inverse``) one of float64 or
    float32 (upper triangle), r a float64 vector of any positive stride, w (updated in place) and
    D = sqrt(diag M) (``root``; None: computed here) contiguous float64 vectors. Returns
    ``(converged, iterations, refactor)``.
    """
    cdef Py_ssize_t width = cnp.PyArray_DIMS(matrix)[0] if cnp.PyArray_NDIM(matrix) == 2 else 0
    cdef Py_ssize_t lda = _column_stride(matrix, width), i
    cdef bint single = _check_inverse(inverse, False)
    cdef int rhs_step = _increment(rhs, "rhs")
    _check_float_array(weights, 1, True, "weights")
    if root is not None:
        _check_float_array(root, 1, False, "root")
    if (
        cnp.PyArray_DIMS(matrix)[1] != width or width < 1 or width > INT_MAX or lda > INT_MAX
        or cnp.PyArray_DIMS(inverse)[0] != width or cnp.PyArray_DIMS(inverse)[1] != width
        or cnp.PyArray_DIMS(rhs)[0] != width or cnp.PyArray_DIMS(weights)[0] != width
        or (root is not None and cnp.PyArray_DIMS(<cnp.ndarray>root)[0] != width)
    ):
        raise ValueError("conjugate_gradients: inconsistent shapes")
    cdef _CGSettings settings
    settings.tolerance, settings.backward, settings.contraction = tolerance, backward, contraction
    settings.max_iterations = max_iterations
    settings.safe_low, settings.safe_high = safe_low, safe_high
    cdef _CGSpace space
    space.n = <int>width
    space.lda = <int>lda
    space.matrix = <const double *>cnp.PyArray_DATA(matrix)
    space.inverse = <const void *>cnp.PyArray_DATA(inverse)
    space.single = single
    cdef double *block = <double *>PyMem_Malloc(6 * <size_t>width * sizeof(double))
    if block == NULL:
        raise MemoryError()
    cdef double *diagonal_root = block + 5 * width
    if root is None:  # D = sqrt(diag M): entry i of M's diagonal at i (1 + lda) < n lda
        for i in range(width):
            diagonal_root[i] = sqrt(space.matrix[i * (1 + lda)])
        space.root = diagonal_root
    else:
        space.root = <const double *>cnp.PyArray_DATA(<cnp.ndarray>root)
    space.residual = block
    space.direction = block + width
    space.image = block + 2 * width
    space.preconditioned = block + 3 * width
    space.single_in = <float *>(block + 4 * width)  # two float vectors in the last n doubles
    space.single_out = space.single_in + width
    cdef const double *right = <const double *>cnp.PyArray_DATA(rhs)
    cdef double *solution = <double *>cnp.PyArray_DATA(weights)
    cdef int converged, iterations = 0
    cdef bint refactor = False
    try:
        if width >= NOGIL_MIN_DIM:
            with nogil:
                converged = _cg(&space, right, rhs_step, solution, inverse_scale, &settings,
                                &iterations, &refactor)
        else:
            converged = _cg(&space, right, rhs_step, solution, inverse_scale, &settings,
                            &iterations, &refactor)
    finally:
        PyMem_Free(block)
    return bool(converged), iterations, bool(refactor)


cdef double _stale_append(
    void *inverse, bint single, int n, const double *x, int step, double scale, double mass,
    double *block,
) noexcept nogil:
    """`stale_append`'s update on checked arguments: c / sigma^2 (P^-1 updated only when it is
    > 0). ``block`` holds 2n doubles (u and z, or their single-precision copies). Indices:
    i < n, x's entry i at i * step."""
    cdef int one = 1, i
    cdef char upper = b"U"
    cdef double zero = 0.0, plus_one = 1.0, denominator, alpha
    cdef float zero_single = 0.0, one_single = 1.0, alpha_single
    cdef double *unit = block
    cdef double *product = block + n
    cdef float *unit_single = <float *>block
    cdef float *product_single = unit_single + n
    if not single:
        for i in range(n):  # u = x / sigma (``scale`` = 1 / sigma)
            unit[i] = x[<Py_ssize_t>i * step] if scale == 1.0 else x[<Py_ssize_t>i * step] * scale
        dsymv(&upper, &n, &plus_one, <double *>inverse, &n, unit, &one, &zero, product, &one)
        denominator = 1.0 / mass + ddot(&n, unit, &one, product, &one)  # 1/(f sigma^2) + u.z
        if denominator > 0.0:
            alpha = -1.0 / denominator
            dsyr(&upper, &n, &alpha, product, &one, <double *>inverse, &n)  # P^-1 -= z z^T / c
        return denominator
    for i in range(n):  # u in single precision, divided in double first
        unit_single[i] = <float>(
            x[<Py_ssize_t>i * step] if scale == 1.0 else x[<Py_ssize_t>i * step] * scale)
    ssymv(&upper, &n, &one_single, <float *>inverse, &n, unit_single, &one, &zero_single,
          product_single, &one)
    denominator = 1.0 / mass + <double>sdot(&n, unit_single, &one, product_single, &one)
    if denominator > 0.0:
        alpha_single = <float>(-1.0 / denominator)
        ssyr(&upper, &n, &alpha_single, product_single, &one, <float *>inverse, &n)
    return denominator


def stale_append(
    cnp.ndarray inverse not None, cnp.ndarray vector not None, double frozen, double safe_low,
    double safe_high,
):
    """stale_append(inverse, vector, frozen, safe_low, safe_high)

    Add f x x^T (f = ``frozen``) to the matrix P whose inverse P^-1 is ``inverse`` (a square
    Fortran array, float64 or float32, upper triangle, updated in place), as
    river_nrrls/_solver.py's ``_StaleFactor.append`` does it: x = sigma u with sigma = 1 for a
    norm in [``safe_low``, ``safe_high``], ||x|| otherwise; z = P^-1 u, c = 1/(f sigma^2) +
    u^T z, P^-1 -= z z^T / c. Returns 1 (added), 2 (nothing to add: f sigma^2 is 0) or 0
    (refused, P^-1 as it was: a non-finite x, or c <= 0, P^-1 no longer positive definite).
    """
    cdef bint single = _check_inverse(inverse, True)
    cdef int step = _increment(vector, "vector")
    cdef Py_ssize_t width = cnp.PyArray_DIMS(inverse)[0]
    if (
        cnp.PyArray_DIMS(inverse)[1] != width or cnp.PyArray_DIMS(vector)[0] != width
        or width < 1 or width > INT_MAX
    ):
        raise ValueError("stale_append: inconsistent shapes")
    cdef int n = <int>width
    cdef const double *x = <const double *>cnp.PyArray_DATA(vector)
    cdef double norm = sqrt(ddot(&n, <double *>x, &step, <double *>x, &step))
    # x = sigma u: u meets P^-1's precision, sigma stays in double
    cdef double sigma = 1.0 if safe_low <= norm <= safe_high else norm
    cdef double mass = frozen * sigma * sigma  # f sigma^2 (inf or NaN for a non-finite x)
    if not mass < INFINITY:
        return 0
    if not mass > 0.0:  # nothing to add (x = 0, or less than the least double)
        return 2
    cdef double scale = 1.0 if sigma == 1.0 else 1.0 / sigma
    cdef void *data = cnp.PyArray_DATA(inverse)
    cdef double denominator
    cdef double *block = <double *>PyMem_Malloc(2 * <size_t>width * sizeof(double))
    if block == NULL:
        raise MemoryError()
    try:
        if width >= NOGIL_MIN_DIM:
            with nogil:
                denominator = _stale_append(data, single, n, x, step, scale, mass, block)
        else:
            denominator = _stale_append(data, single, n, x, step, scale, mass, block)
    finally:
        PyMem_Free(block)
    return 1 if denominator > 0.0 else 0


# ----------------------------------------------------------------------------- outputs, rank one


def outputs(cnp.ndarray weights not None, cnp.ndarray vector not None):
    """outputs(weights, vector)

    The outputs ``weights @ vector`` of a (C, D) Fortran array of weights (one class a row) and
    a vector of D entries, as a list of C floats; None when one is not finite.
    """
    _check_float_array(weights, 2, False, "weights")
    cdef int increment = _increment(vector, "vector")
    cdef Py_ssize_t n_classes = cnp.PyArray_DIMS(weights)[0], width = cnp.PyArray_DIMS(weights)[1]
    if cnp.PyArray_DIMS(vector)[0] != width or n_classes > INT_MAX or width > INT_MAX:
        raise ValueError("outputs: inconsistent shapes")
    cdef double small[8]
    cdef double *values = _scratch(small, 8, n_classes)
    cdef int rows = <int>n_classes, columns = <int>width, one = 1
    cdef double alpha = 1.0, beta = 0.0
    cdef char plain = b"N"
    cdef Py_ssize_t k
    try:
        if rows > 0 and columns > 0:  # f_k = w_k . x for every class k (lda = rows >= 1)
            dgemv(&plain, &rows, &columns, &alpha, <double *>cnp.PyArray_DATA(weights), &rows,
                  <double *>cnp.PyArray_DATA(vector), &increment, &beta, values, &one)
        else:
            memset(values, 0, n_classes * sizeof(double))
        for k in range(n_classes):
            if not isfinite(values[k]):
                return None
        return [values[k] for k in range(n_classes)]
    finally:
        if values != small:
            PyMem_Free(values)


def rank_one(
    cnp.ndarray scatters not None, Py_ssize_t slot, Py_ssize_t dim, cnp.ndarray vector not None,
    double weight,
):
    """rank_one(scatters, slot, dim, vector, weight)

    [n^c, s^c; s^c, A^c] += weight [1, x][1, x]^T on the upper triangle of the leading
    (dim, dim) block of class ``slot``'s scatter in the (capacity, capacity, C) Fortran array
    ``scatters`` (``vector`` = [1, x], its first ``dim`` entries).
    """
    _check_float_array(scatters, 3, True, "scatters")
    cdef int increment = _increment(vector, "vector")
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(scatters)
    cdef Py_ssize_t capacity = shape[0]
    if (
        shape[1] != capacity or slot < 0 or slot >= shape[2] or dim < 1 or dim > capacity
        or cnp.PyArray_DIMS(vector)[0] < dim or capacity > INT_MAX
    ):
        raise ValueError("rank_one: inconsistent shapes")
    cdef int n = <int>dim, lda = <int>capacity
    cdef char upper = b"U"
    cdef double *scatter = <double *>cnp.PyArray_DATA(scatters) + slot * capacity * capacity
    cdef double *x = <double *>cnp.PyArray_DATA(vector)
    if dim >= NOGIL_MIN_DIM:
        with nogil:
            dsyr(&upper, &n, &weight, x, &increment, scatter, &lda)  # A += w x x^T (upper)
    else:
        dsyr(&upper, &n, &weight, x, &increment, scatter, &lda)


# ----------------------------------------------------------------------------- refill


cdef inline bint _same_key(PyObject *key, PyObject *expected) noexcept:
    """Whether a key equals the remembered one, decided without running Python code: exact str
    with exact str, exact int with exact int (no __eq__ of theirs can be overridden). Any other
    pair is not decided here: the caller's Python path compares it."""
    if Exact_str(key) and Exact_str(expected):
        return Str_compare(key, expected) == 0
    if Exact_int(key) and Exact_int(expected):
        return Rich_compare_bool(key, expected, Py_EQ) == 1
    return False


cdef int _read_sample(
    object x, object keys, Py_ssize_t n_keys, const double *cached, Py_ssize_t size,
    const Py_ssize_t *column, Py_ssize_t offset, double *numbers,
) noexcept:
    """x's values into ``numbers`` (n_keys entries) when its keys are ``keys`` in that order and
    its values finite floats or ints at columns inside [offset, size): SAME_VALUES if each equals
    its entry of ``cached``, else NEW_VALUES; NOT_MINE otherwise.

    The walk holds borrowed references, so it calls no Python code and allocates no Python
    object: no key's __eq__ or __hash__, no value's __float__, no collection. Nothing can then
    change x during the walk (the GIL is held; on a free-threaded build, the caller's critical
    section). Every index is bounded: i < n_keys before any use.
    """
    cdef PyObject *key
    cdef PyObject *value
    cdef PyObject *expected
    cdef Py_ssize_t position = 0, i = 0, at
    cdef double number
    cdef bint same = True
    while Dict_next(x, &position, &key, &value):
        if i >= n_keys:
            return NOT_MINE
        expected = Tuple_item(keys, i)
        if key != expected and not _same_key(key, expected):
            return NOT_MINE
        if Exact_float(value):
            number = Float_value(value)
        elif Exact_int(value):
            number = Int_as_double(value)
            if number == -1.0 and Error_occurred() != NULL:  # beyond float range: validate
                Error_clear()
                return NOT_MINE
        else:  # anything else (bool, a float subclass, numpy scalar, str, None...): validate
            return NOT_MINE
        at = column[i]
        if not isfinite(number) or at < offset or at >= size:
            return NOT_MINE
        same = same and cached[at] == number
        numbers[i] = number
        i += 1
    if i != n_keys:
        return NOT_MINE
    return SAME_VALUES if same else NEW_VALUES


cdef bint _columns_fit(cnp.ndarray columns, Py_ssize_t n_keys) noexcept:
    """Whether ``columns`` is an intp vector of ``n_keys`` entries, C-contiguous, aligned, in
    native byte order."""
    return (
        cnp.PyArray_NDIM(columns) == 1
        and cnp.PyArray_EquivTypenums(cnp.PyArray_TYPE(columns), cnp.NPY_INTP)
        and cnp.PyArray_ISCARRAY_RO(columns)
        and cnp.PyArray_DIMS(columns)[0] == n_keys
    )


cdef object _new_vector(
    Py_ssize_t size, Py_ssize_t offset, double fill, const double *numbers,
    cnp.ndarray columns, Py_ssize_t n_keys,
):
    """A new read-only float64 vector of ``size`` entries: ``fill`` in the first ``offset``, zeros
    elsewhere but ``numbers[i]`` at ``columns[i]``; None if the columns changed meanwhile."""
    cdef cnp.npy_intp length = size
    cdef cnp.ndarray vector = cnp.PyArray_EMPTY(1, &length, cnp.NPY_DOUBLE, 0)
    # Allocating may have run Python code (a collection's finalisers): the columns are checked
    # and every index bounded again, on the data pointer read now.
    if not _columns_fit(columns, n_keys):
        return None
    cdef const Py_ssize_t *column = <const Py_ssize_t *>cnp.PyArray_DATA(columns)
    cdef double *entries = <double *>cnp.PyArray_DATA(vector)
    cdef Py_ssize_t i, at
    for i in range(size):
        entries[i] = fill if i < offset else 0.0
    for i in range(n_keys):
        at = column[i]
        if at < offset or at >= size:
            return None
        entries[at] = numbers[i]
    cnp.PyArray_CLEARFLAGS(vector, cnp.NPY_ARRAY_WRITEABLE)
    return vector


def refill(
    x, tuple keys not None, cnp.ndarray vector not None, cnp.ndarray columns not None,
    Py_ssize_t offset, double fill,
):
    """refill(x, keys, vector, columns, offset, fill)

    The dense vector of the feature dict ``x`` when it has the keys ``keys`` (a tuple, in that
    order) of the sample that was encoded last, as ``vector`` at the ``columns`` (an intp array,
    one a key): ``vector`` itself when every value equals its entry, else a new read-only vector
    like it with x's values. None when ``x`` is not a plain dict with those keys (exact str and
    int keys compared by value, others only by identity) or a value is not a finite float or
    int: the caller's validation then takes it (and refuses what is wrong, naming it).
    """
    return _refill(x, keys, vector, columns, offset, fill)


cdef object _refill(
    object x, tuple keys, cnp.ndarray vector, cnp.ndarray columns, Py_ssize_t offset,
    double fill,
):
    """`refill`, its arguments checked here."""
    cdef Py_ssize_t n_keys = len(keys)
    if not Exact_dict(x) or Dict_size(x) != n_keys:
        return None
    _check_float_array(vector, 1, False, "vector")
    if not _columns_fit(columns, n_keys):
        raise ValueError("refill: inconsistent columns")
    cdef Py_ssize_t size = cnp.PyArray_DIMS(vector)[0]
    if offset < 0 or offset > size:
        raise ValueError("refill: inconsistent columns")
    cdef double small[64]
    cdef double *numbers = _scratch(small, 64, n_keys)
    cdef int verdict
    try:
        with cython.critical_section(x):
            verdict = _read_sample(
                x, keys, n_keys, <const double *>cnp.PyArray_DATA(vector), size,
                <const Py_ssize_t *>cnp.PyArray_DATA(columns), offset, numbers,
            )
        if verdict == SAME_VALUES:
            return vector
        if verdict == NEW_VALUES:
            return _new_vector(size, offset, fill, numbers, columns, n_keys)
        return None
    finally:
        if numbers != small:
            PyMem_Free(numbers)


# ----------------------------------------------------------------------------- a whole prediction


# BLAS's thread setters (``int setter(int n)``: n threads, the previous number returned), given
# by `use_thread_setters`; ``pair_outputs`` runs its BLAS on one thread with them when asked.
ctypedef int (*_ThreadSetter)(int) noexcept nogil
cdef enum:
    MAX_SETTERS = 4
cdef _ThreadSetter _setters[MAX_SETTERS]
cdef int _n_setters = 0


def use_thread_setters(tuple addresses not None):
    """use_thread_setters(addresses)

    The C addresses (ints) of the thread setters of the loaded OpenBLAS libraries
    (river_nrrls/_threads.py's ``THREAD_SETTERS``, ``ctypes.cast(setter, c_void_p).value``), at
    most four, for ``pair_outputs(..., one_thread=True)``. Private: an address that is not such
    a function crashes the process at the next such call.
    """
    global _n_setters
    if len(addresses) > MAX_SETTERS:
        raise ValueError(f"at most {MAX_SETTERS} thread setters")
    for address in addresses:
        if not isinstance(address, int) or address <= 0:
            raise ValueError("a thread setter's address is a positive int")
    _n_setters = 0
    for address in addresses:
        _setters[_n_setters] = <_ThreadSetter><size_t>address
        _n_setters += 1


def pair_outputs(
    x, tuple keys not None, cnp.ndarray vector not None, cnp.ndarray columns not None,
    Py_ssize_t offset, double fill, cnp.ndarray scatters not None, Py_ssize_t dim,
    Py_ssize_t first, bint reweight, double tau, double eta, double l2, cnp.ndarray out not None,
    bint one_thread=False,
):
    """pair_outputs(x, keys, vector, columns, offset, fill, scatters, dim, first, reweight, tau,
    eta, l2, out, one_thread=False)

    The two-class prediction of a remembered sample in one call: ``refill`` (the first six
    arguments), then ``pair_weights`` (the others: the weights into ``out``), then ``outputs``
    of those weights on x's vector. None when ``refill`` leaves x to the validation (nothing is
    solved). Otherwise ``(sample, info, outputs)``: x's vector as ``refill`` returns it,
    dposv's info (``out`` is written only when it is 0), and the two outputs as a list, None
    when ``info`` is not 0 (no outputs computed) or an output is not finite.

    ``one_thread``: the solve and the outputs run on one BLAS thread (the setters of
    `use_thread_setters`), the previous setting restored before the call returns. The solve
    then keeps the GIL (fewer than ``NOGIL_MIN_DIM`` columns, else ValueError), so no other
    Python thread sees the setting meanwhile.
    """
    sample = _refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    # Every check before the BLAS threads are set: nothing raises (or allocates a Python object,
    # which may run a finaliser) while they are.
    _check_pair(scatters, out, 2, dim, dim, first)
    cdef cnp.ndarray refilled = <cnp.ndarray>sample
    if cnp.PyArray_DIMS(refilled)[0] != dim:
        raise ValueError("pair_outputs: inconsistent shapes")
    if one_thread and dim - first >= NOGIL_MIN_DIM:
        raise ValueError(f"pair_outputs: one_thread needs fewer than {NOGIL_MIN_DIM} columns")
    cdef int previous[MAX_SETTERS]
    cdef int k, n_set = _n_setters if one_thread else 0
    cdef int info, rows = 2, columns_ = <int>dim, one = 1
    cdef double values[2]
    cdef double alpha = 1.0, beta = 0.0
    cdef char plain = b"N"
    for k in range(n_set):
        previous[k] = _setters[k](1)
    try:
        info = _pair_weights(scatters, dim, first, reweight, tau, eta, l2, out)
        if info == 0:  # f_k = w_k . x (x: refill's vector, contiguous)
            dgemv(&plain, &rows, &columns_, &alpha, <double *>cnp.PyArray_DATA(out), &rows,
                  <double *>cnp.PyArray_DATA(refilled), &one, &beta, values, &one)
    finally:
        for k in range(n_set):
            _setters[k](previous[k])
    if info != 0:
        return (sample, info, None)
    if not (isfinite(values[0]) and isfinite(values[1])):
        return (sample, 0, None)
    return (sample, 0, [values[0], values[1]])


# ----------------------------------------------------------------------------- a whole update


def learn_remembered(
    x, tuple keys not None, cnp.ndarray vector not None, cnp.ndarray columns not None,
    Py_ssize_t offset, double fill, cnp.ndarray scatters not None, Py_ssize_t slot,
    Py_ssize_t dim, double weight, double bound, double limit,
):
    """learn_remembered(x, keys, vector, columns, offset, fill, scatters, slot, dim, weight,
    bound, limit)

    ``learn_one``'s step for a remembered sample in one call: ``refill`` (the first six
    arguments), the sample's load w |x|^2 (one ddot, as ``ClassStatistics.check_sample``), and,
    when ``bound + load <= limit`` (the range bound's fast check), the rank-1 update of class
    ``slot`` as ``rank_one(scatters, slot, dim, vector, weight)``. None when ``refill`` leaves x
    to the validation; else ``(sample, load)``: x's vector, and the load, None when the bound
    would be passed (then nothing is updated: the caller's exact check decides). Nothing is
    updated either when an argument is inconsistent (an error).
    """
    sample = _refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    _check_float_array(scatters, 3, True, "scatters")
    cdef cnp.ndarray refilled = <cnp.ndarray>sample
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(scatters)
    cdef Py_ssize_t capacity = shape[0]
    if (
        shape[1] != capacity or slot < 0 or slot >= shape[2] or dim < 1 or dim > capacity
        or cnp.PyArray_DIMS(refilled)[0] != dim or capacity > INT_MAX
    ):
        raise ValueError("learn_remembered: inconsistent shapes")
    cdef int n = <int>dim, lda = <int>capacity, one = 1
    cdef char upper = b"U"
    cdef double *entries = <double *>cnp.PyArray_DATA(refilled)  # contiguous (refill's)
    cdef double load = ddot(&n, entries, &one, entries, &one) * weight  # w |x|^2
    if not bound + load <= limit:  # beyond the bound (or not finite): the exact check decides
        return (sample, None)
    cdef double *scatter = <double *>cnp.PyArray_DATA(scatters) + slot * capacity * capacity
    dsyr(&upper, &n, &weight, entries, &one, scatter, &lda)  # [n, s; s, A] += w [1, x][1, x]^T
    return (sample, load)


# ----------------------------------------------------------------------------- RLSRegressor's step


cdef void _add_row(double *upper, Py_ssize_t lda, Py_ssize_t n, double *row) noexcept nogil:
    """R^T R += row row^T for the upper-triangular n x n R (column-major, leading dimension
    ``lda`` >= n) and a row of n entries (overwritten): the QR of [R; row] by one Householder
    reflection per column, LAPACK dlarfg's (the one dtpqrt takes for a single row). Column j's
    reflection H = I - tau [1; v][1; v]^T maps (R_jj, row_j) to (beta, 0), beta = -sign(R_jj)
    |(R_jj, row_j)|, and is applied to R's row j and the row beyond column j; a zero row_j is
    its identity (tau = 0). Indices: j < k < n, j + k lda < n lda inside R."""
    cdef Py_ssize_t j, k
    cdef double alpha, x, beta, tau, v, w, tau_v
    cdef double *r_row
    for j in range(n):
        x = row[j]
        if x == 0.0:
            continue
        alpha = upper[j + j * lda]
        beta = -copysign(hypot(alpha, x), alpha)
        tau = (beta - alpha) / beta
        v = x / (alpha - beta)  # |alpha - beta| >= |x| > 0
        tau_v = tau * v
        upper[j + j * lda] = beta
        r_row = upper + j
        for k in range(j + 1, n):
            w = r_row[k * lda] + v * row[k]  # (H [R_j; row])_k = [R_jk; row_k] - tau [1; v] w
            r_row[k * lda] -= tau * w
            row[k] -= tau_v * w


cdef bint _add_row_and_solve(
    double *upper, Py_ssize_t n, double *row, double *weights
) noexcept nogil:
    """`_add_row` of the row (n + 1 entries, overwritten) to R ((n + 1) x (n + 1), the weights'
    n columns then the target's), then w = R11^{-1} z into ``weights`` (n entries; z is R's
    last column): dtrsv. False when R11 has a zero pivot or w is not finite (``weights`` is
    then not the solution). The caller has checked n + 1 <= INT_MAX."""
    cdef Py_ssize_t i
    cdef int count = <int>n, lda = <int>(n + 1), one = 1
    cdef char up = b"U", plain = b"N"
    cdef bint solved = True
    _add_row(upper, n + 1, n + 1, row)
    for i in range(n):
        weights[i] = upper[i + n * (n + 1)]  # z
        solved = solved and upper[i + i * (n + 1)] != 0.0
    if solved and n > 0:
        dtrsv(&up, &plain, &plain, &count, upper, &lda, weights, &one)  # R11 w = z
        solved = isfinite(ddot(&count, weights, &one, weights, &one))
    return solved


def rls_add_row(cnp.ndarray upper not None, cnp.ndarray row not None,
                cnp.ndarray solution not None):
    """rls_add_row(upper, row, solution)

    R^T R += row row^T for R (``upper``, an (n + 1) x (n + 1) writable Fortran array, updated in
    place) and ``row`` (n + 1 entries, a writable contiguous vector, overwritten): one
    Householder reflection a column, as ``rls_learn``. Then w = R11^{-1} z into ``solution``
    (n entries, writable contiguous; z is R's last column): True, or False when R11 has a
    zero pivot or w is not finite (``solution`` is then not the weights).
    """
    cdef Py_ssize_t n = cnp.PyArray_DIMS(row)[0] - 1 if cnp.PyArray_NDIM(row) == 1 else -1
    if n < 0 or n >= INT_MAX:
        raise ValueError("rls_add_row: row must be a vector of at least one entry")
    _check_square(upper, n + 1, "upper")
    _check_vector(row, n + 1, "row")
    _check_vector(solution, n, "solution")
    return _add_row_and_solve(
        <double *>cnp.PyArray_DATA(upper), n, <double *>cnp.PyArray_DATA(row),
        <double *>cnp.PyArray_DATA(solution),
    )


cdef int _check_vector(cnp.ndarray vector, Py_ssize_t length, str name) except -1:
    """A writable contiguous float64 vector of ``length`` entries, or an error."""
    if (
        cnp.PyArray_TYPE(vector) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(vector) != 1
        or not cnp.PyArray_ISCARRAY(vector) or cnp.PyArray_DIMS(vector)[0] != length
    ):
        raise ValueError(f"{name} must be a writable contiguous float64 vector of {length}")
    return 0


cdef int _check_square(cnp.ndarray matrix, Py_ssize_t order, str name) except -1:
    """A writable float64 (order x order) Fortran array, or an error."""
    _check_float_array(matrix, 2, True, name)
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(matrix)
    if shape[0] != order or shape[1] != order:
        raise ValueError(f"{name} must be {order} x {order}")
    return 0


def rls_learn(
    x, tuple keys not None, cnp.ndarray vector not None, cnp.ndarray columns not None,
    Py_ssize_t offset, double fill, cnp.ndarray scatter not None, cnp.ndarray upper not None,
    cnp.ndarray solution not None, Py_ssize_t first, double weight, double mass, double target,
    double bound, double limit,
):
    """rls_learn(x, keys, vector, columns, offset, fill, scatter, upper, solution, first, weight,
    mass, target, bound, limit)

    RLSRegressor's ``learn_one`` for a remembered sample in one call: ``refill`` (the first six
    arguments: x's vector [1, x] of ``size`` entries), the range bound's fast check
    ``grown = (|[1, x]|^2 + y^2) w + bound <= limit`` (``w = weight``, ``y = target``), then, in
    place: the scatter of [1, x, y] (a (size + 1) x (size + 1) Fortran array) += ``mass``
    [1, x, y][1, x, y]^T (upper triangle, one dsyr); R (``upper``, (n + 1) x (n + 1), n = size -
    ``first``) updated with the row sqrt(mass) [1, x, y][first:] (`_add_row`); and the weights
    w = R11^{-1} z into ``solution`` (n entries, one dtrsv).

    None when ``refill`` leaves x to the validation (nothing is changed). Otherwise ``(sample,
    grown, solved)``: x's vector; ``grown``, None when the bound would be passed (then nothing
    is changed: the caller's exact check decides); ``solved``, False when R11 has a zero pivot
    or the weights are not finite (``solution`` is then to be solved again by the caller's
    fallbacks). An inconsistent argument raises before anything is changed.
    """
    sample = _refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    # The checks read the arrays now (refill's allocation may have run Python code)
    cdef cnp.ndarray refilled = <cnp.ndarray>sample
    cdef Py_ssize_t size = cnp.PyArray_DIMS(refilled)[0], n = size - first, i
    if first < 0 or n < 0 or size >= INT_MAX:
        raise ValueError("rls_learn: inconsistent shapes")
    _check_square(scatter, size + 1, "scatter")
    _check_square(upper, n + 1, "upper")
    _check_vector(solution, n, "solution")
    cdef int length = <int>size, order = <int>(size + 1), one = 1
    cdef double *entries = <double *>cnp.PyArray_DATA(refilled)  # contiguous (refill's)
    cdef double grown = (ddot(&length, entries, &one, entries, &one) + target * target) * weight
    grown += bound
    if not grown <= limit:  # beyond the bound (or not finite): the exact check decides
        return (sample, None, False)
    cdef double small[128]
    cdef double *augmented = _scratch(small, 128, size + 1)
    cdef double *coefficients = <double *>cnp.PyArray_DATA(upper)
    cdef double *weights = <double *>cnp.PyArray_DATA(solution)
    cdef double root
    cdef char up = b"U"
    cdef bint solved
    try:
        for i in range(size):
            augmented[i] = entries[i]
        augmented[size] = target  # [1, x, y]
        # scatter += m [1, x, y][1, x, y]^T (upper triangle)
        dsyr(&up, &order, &mass, augmented, &one, <double *>cnp.PyArray_DATA(scatter), &order)
        if mass != 1.0:
            root = sqrt(mass)
            for i in range(first, size + 1):
                augmented[i] *= root  # the row sqrt(m) [x, y]
        solved = _add_row_and_solve(coefficients, n, augmented + first, weights)
    finally:
        if augmented != small:
            PyMem_Free(augmented)
    return (sample, grown, solved)


def rls_predict(
    x, tuple keys not None, cnp.ndarray vector not None, cnp.ndarray columns not None,
    Py_ssize_t offset, double fill, cnp.ndarray solution not None, Py_ssize_t first,
):
    """rls_predict(x, keys, vector, columns, offset, fill, solution, first)

    RLSRegressor's ``predict_one`` for a remembered sample in one call: ``refill`` (the first six
    arguments: x's vector [1, x]), then the prediction ``solution . [1, x][first:]`` (one ddot).
    None when ``refill`` leaves x to the validation; else ``(sample, prediction)``, the
    prediction as computed (not finite: the caller refuses it).
    """
    sample = _refill(x, keys, vector, columns, offset, fill)
    if sample is None:
        return None
    if cnp.PyArray_TYPE(solution) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(solution) != 1:
        raise TypeError("solution must be a float64 vector")
    cdef cnp.ndarray refilled = <cnp.ndarray>sample
    cdef Py_ssize_t size = cnp.PyArray_DIMS(refilled)[0], n = cnp.PyArray_DIMS(solution)[0]
    if first < 0 or size - first != n or n > INT_MAX:
        raise ValueError("rls_predict: inconsistent shapes")
    cdef int count = <int>n, one = 1, increment
    cdef double prediction = 0.0  # no column: nothing to multiply
    if count > 0:  # (an empty array's stride is 0: checked only when there are entries)
        increment = _increment(solution, "solution")
        prediction = ddot(&count, <double *>cnp.PyArray_DATA(solution), &increment,
                          <double *>cnp.PyArray_DATA(refilled) + first, &one)
    return (sample, prediction)
