/* The narrow step of NR-RLS in a few compiled calls.

   At the widths where the direct solve is the solver's path, the arithmetic of a prequential
   step (predict, then learn) is a few microseconds, and the Python calls around it cost as much
   again: one call to assemble M and r, one per BLAS or LAPACK routine, the item assignments of
   their coefficients. These kernels do each part in one call, reading the statistics where
   river_nrrls/_stats.py keeps them, with the BLAS and LAPACK that scipy links (reached through
   scipy.linalg.cython_blas and cython_lapack, so no build dependency beyond a C compiler):
     - pair_weights: the two-class direct solve (class weights, M and r, one dposv);
     - pair_matrix:  the two-class M alone (upper triangle), for the stale-factor path;
     - outputs:      the outputs w_k . x of every class (one dgemv), refused when not finite;
     - rank_one:     a sample's rank-1 update of its class's scatter (one dsyr);
     - refill:       the dense vector of a sample with the features of the last one (the
                     encoding's cache, river_nrrls/_index.py).
   Each computes the formulas of the Python path that it replaces (river_nrrls/_solver.py and
   _stats.py), which stays for the fallbacks and is used when this module is not built; the
   roundings differ in the last bits (as between two BLAS builds), which shows only in systems
   so ill-conditioned that no solve is accurate there.

   Notation (algorithms page): the augmented scatter of class c is [n^c, s^c^T; s^c, A^c], kept
   in column-major order in a (capacity, capacity, C) array, upper triangle authoritative. With
   the class weights w_0 and w_1 (1/n^c for TER, 1 without reweighting, 0 for an empty class)
   and the targets t_pos = tau + eta, t_rest = tau - eta:
       M   = w_0 A^0 + w_1 A^1 + b I            (over the columns first..dim-1)
       r_0 = t_pos w_0 s^0 + t_rest w_1 s^1     (row 0 of the scatters holds n^c and s^c)
       r_1 = t_rest w_0 s^0 + t_pos w_1 s^1     (r_1 = -r_0 when tau = 0: one right-hand side)
   and the weights of class k solve M w_k = r_k. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include <math.h>

typedef void (*dposv_fn)(char *uplo, int *n, int *nrhs, double *a, int *lda, double *b, int *ldb,
                         int *info);
typedef void (*dgemv_fn)(char *trans, int *m, int *n, double *alpha, double *a, int *lda,
                         double *x, int *incx, double *beta, double *y, int *incy);
typedef void (*dsyr_fn)(char *uplo, int *n, double *alpha, double *x, int *incx, double *a,
                        int *lda);
static dposv_fn dposv;
static dgemv_fn dgemv;
static dsyr_fn dsyr;

/* A float64 buffer of ndim dimensions, column-major (Fortran) contiguous, or an error. */
static int get_float_buffer(PyObject *obj, Py_buffer *view, int ndim, int writable,
                            const char *name) {
    int flags = PyBUF_F_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        return -1;
    }
    if (view->ndim != ndim || view->format == NULL || strcmp(view->format, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a %d-dimensional float64 array", name, ndim);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A float64 vector (one dimension, any positive stride), its stride counted in entries, or an
   error. */
static int get_vector(PyObject *obj, Py_buffer *view, int *increment, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        return -1;
    }
    Py_ssize_t stride = view->ndim == 1 ? view->strides[0] : 0;
    if (view->ndim != 1 || view->format == NULL || strcmp(view->format, "d") != 0 ||
        stride <= 0 || stride % (Py_ssize_t)sizeof(double) != 0 ||
        stride / (Py_ssize_t)sizeof(double) > INT_MAX) {
        PyErr_Format(PyExc_TypeError, "%s must be a float64 vector of positive stride", name);
        PyBuffer_Release(view);
        return -1;
    }
    *increment = (int)(stride / (Py_ssize_t)sizeof(double));
    return 0;
}

/* The two-class scatters (a (capacity, capacity, 2) Fortran float64 array, read) and an
   output (a writable Fortran float64 array of ``out_ndim`` dimensions and the shape
   ``out_rows`` x ``out_columns``), for the columns ``first:dim``; or an error, nothing held. */
static int get_pair_buffers(PyObject *const *args, Py_ssize_t out_index, int out_ndim,
                            Py_ssize_t out_rows, Py_ssize_t out_columns, Py_ssize_t dim,
                            Py_ssize_t first, Py_buffer *scatters, Py_buffer *out) {
    if (get_float_buffer(args[0], scatters, 3, 0, "scatters") < 0) {
        return -1;
    }
    if (get_float_buffer(args[out_index], out, out_ndim, 1, "out") < 0) {
        PyBuffer_Release(scatters);
        return -1;
    }
    Py_ssize_t capacity = scatters->shape[0];
    if (scatters->shape[1] != capacity || scatters->shape[2] != 2 || dim > capacity ||
        first < 0 || first >= dim || dim > INT_MAX || out->shape[0] != out_rows ||
        out->shape[1] != out_columns) {
        PyErr_SetString(PyExc_ValueError, "inconsistent shapes of the scatters and the output");
        PyBuffer_Release(scatters);
        PyBuffer_Release(out);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(pair_weights_doc,
"pair_weights(scatters, dim, first, reweight, tau, eta, l2, out)\n"
"--\n\n"
"Solve the two-class system from the (capacity, capacity, 2) Fortran array of augmented\n"
"scatters into ``out``, a (2, dim) Fortran array (rows: the classes' weights, 0 before\n"
"``first``). Returns dposv's info: ``out`` is written only when it is 0.");

static PyObject *pair_weights(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "pair_weights takes 8 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t dim = PyLong_AsSsize_t(args[1]);
    Py_ssize_t first = PyLong_AsSsize_t(args[2]);
    int reweight = PyObject_IsTrue(args[3]);
    double tau = PyFloat_AsDouble(args[4]);
    double eta = PyFloat_AsDouble(args[5]);
    double l2 = PyFloat_AsDouble(args[6]);
    if (PyErr_Occurred() || reweight < 0) {
        return NULL;
    }
    Py_buffer scatters, out;  /* out: (2, dim) */
    if (get_pair_buffers(args, 7, 2, 2, dim, dim, first, &scatters, &out) < 0) {
        return NULL;
    }
    Py_ssize_t capacity = scatters.shape[0];
    const double *scatter_0 = scatters.buf;
    const double *scatter_1 = scatter_0 + capacity * capacity;
    double n_0 = scatter_0[0], n_1 = scatter_1[0];  /* the class masses n^0, n^1 */
    double w_0, w_1;  /* the class weights; an empty side gets 0 */
    if (reweight) {
        w_0 = n_0 > 0.0 ? 1.0 / n_0 : 0.0;  /* 1/n^0 */
        w_1 = n_1 > 0.0 ? 1.0 / n_1 : 0.0;  /* 1/n^1 */
    } else {
        w_0 = n_0 > 0.0 ? 1.0 : 0.0;
        w_1 = n_1 > 0.0 ? 1.0 : 0.0;
    }
    double target_pos = tau + eta, target_rest = tau - eta;
    int opposite = tau == 0.0;  /* r_1 = -r_0: one right-hand side */
    int n = (int)(dim - first), n_rhs = opposite ? 1 : 2, info = 0;
    double *matrix = PyMem_Malloc(((size_t)n * n + 2 * (size_t)n) * sizeof(double));
    if (matrix == NULL) {
        PyBuffer_Release(&scatters);
        PyBuffer_Release(&out);
        return PyErr_NoMemory();
    }
    double *rhs = matrix + (size_t)n * n;  /* column-major (n, n_rhs): r_0, then r_1 */
    for (int j = 0; j < n; j++) {
        const double *column_0 = scatter_0 + (first + j) * capacity;
        const double *column_1 = scatter_1 + (first + j) * capacity;
        double *target = matrix + (size_t)j * n;
        for (int i = 0; i <= j; i++) {  /* M = w_0 A^0 + w_1 A^1 (upper triangle) */
            target[i] = w_0 * column_0[first + i] + w_1 * column_1[first + i];
        }
        target[j] += l2;  /* + b I */
        double sum_0 = column_0[0], sum_1 = column_1[0];  /* s^0_j, s^1_j (row 0) */
        rhs[j] = target_pos * w_0 * sum_0 + target_rest * w_1 * sum_1;  /* r_0 */
        if (!opposite) {
            rhs[n + j] = target_rest * w_0 * sum_0 + target_pos * w_1 * sum_1;  /* r_1 */
        }
    }
    char upper = 'U';
    dposv(&upper, &n, &n_rhs, matrix, &n, rhs, &n, &info);  /* M = U^T U; U^T U w = r */
    if (info == 0) {
        double *weights = out.buf;  /* (2, dim), column-major: weights[k + 2 j] = w_k[j] */
        memset(weights, 0, 2 * (size_t)first * sizeof(double));
        for (int j = 0; j < n; j++) {
            weights[2 * (first + j)] = rhs[j];
            weights[2 * (first + j) + 1] = opposite ? -rhs[j] : rhs[n + j];  /* w_1 = -w_0 */
        }
    }
    PyMem_Free(matrix);
    PyBuffer_Release(&scatters);
    PyBuffer_Release(&out);
    return PyLong_FromLong(info);
}

PyDoc_STRVAR(pair_matrix_doc,
"pair_matrix(scatters, dim, first, w_0, w_1, l2, out)\n"
"--\n\n"
"M = w_0 A^0 + w_1 A^1 + b I over the columns ``first:dim`` of the (capacity, capacity, 2)\n"
"Fortran array of augmented scatters, into the upper triangle of ``out``, a square Fortran\n"
"array of ``dim - first`` columns (its lower triangle is left as it was).");

static PyObject *pair_matrix(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "pair_matrix takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t dim = PyLong_AsSsize_t(args[1]);
    Py_ssize_t first = PyLong_AsSsize_t(args[2]);
    double w_0 = PyFloat_AsDouble(args[3]);
    double w_1 = PyFloat_AsDouble(args[4]);
    double l2 = PyFloat_AsDouble(args[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_buffer scatters, out;  /* out: (dim - first, dim - first) */
    if (get_pair_buffers(args, 6, 2, dim - first, dim - first, dim, first, &scatters, &out) < 0) {
        return NULL;
    }
    Py_ssize_t capacity = scatters.shape[0], n = dim - first;
    const double *scatter_0 = scatters.buf;
    const double *scatter_1 = scatter_0 + capacity * capacity;
    double *matrix = out.buf;
    for (Py_ssize_t j = 0; j < n; j++) {
        const double *column_0 = scatter_0 + (first + j) * capacity + first;
        const double *column_1 = scatter_1 + (first + j) * capacity + first;
        double *target = matrix + j * n;
        for (Py_ssize_t i = 0; i <= j; i++) {  /* M = w_0 A^0 + w_1 A^1 (upper triangle) */
            target[i] = w_0 * column_0[i] + w_1 * column_1[i];
        }
        target[j] += l2;  /* + b I */
    }
    PyBuffer_Release(&scatters);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(outputs_doc,
"outputs(weights, vector)\n"
"--\n\n"
"The outputs ``weights @ vector`` of a (C, D) Fortran array of weights (one class a row) and a\n"
"vector of D entries, as a list of C floats; None when one is not finite.");

static PyObject *outputs(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "outputs takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_buffer weights, vector;
    if (get_float_buffer(args[0], &weights, 2, 0, "weights") < 0) {
        return NULL;
    }
    int increment;
    if (get_vector(args[1], &vector, &increment, "vector") < 0) {
        PyBuffer_Release(&weights);
        return NULL;
    }
    Py_ssize_t n_classes = weights.shape[0], width = weights.shape[1];
    if (vector.shape[0] != width || n_classes > INT_MAX || width > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "outputs: inconsistent shapes");
        PyBuffer_Release(&weights);
        PyBuffer_Release(&vector);
        return NULL;
    }
    double small[8];
    double *values = n_classes <= 8 ? small : PyMem_Malloc(n_classes * sizeof(double));
    PyObject *result = NULL;
    if (values == NULL) {
        PyErr_NoMemory();
    } else {
        int rows = (int)n_classes, columns = (int)width, one = 1;
        double alpha = 1.0, beta = 0.0;
        char plain = 'N';
        if (rows > 0 && columns > 0) {  /* f_k = w_k . x for every class k */
            dgemv(&plain, &rows, &columns, &alpha, weights.buf, &rows, vector.buf, &increment,
                  &beta, values, &one);
        } else {
            memset(values, 0, n_classes * sizeof(double));
        }
        int finite = 1;
        for (Py_ssize_t k = 0; k < n_classes; k++) {
            finite &= isfinite(values[k]) != 0;
        }
        if (!finite) {
            result = Py_NewRef(Py_None);
        } else if ((result = PyList_New(n_classes)) != NULL) {
            for (Py_ssize_t k = 0; k < n_classes; k++) {
                PyObject *number = PyFloat_FromDouble(values[k]);
                if (number == NULL) {
                    Py_CLEAR(result);
                    break;
                }
                PyList_SET_ITEM(result, k, number);
            }
        }
        if (values != small) {
            PyMem_Free(values);
        }
    }
    PyBuffer_Release(&weights);
    PyBuffer_Release(&vector);
    return result;
}

PyDoc_STRVAR(rank_one_doc,
"rank_one(scatters, slot, dim, vector, weight)\n"
"--\n\n"
"[n^c, s^c; s^c, A^c] += weight [1, x][1, x]^T on the upper triangle of the leading (dim, dim)\n"
"block of class ``slot``'s scatter in the (capacity, capacity, C) Fortran array ``scatters``\n"
"(``vector`` = [1, x], its first ``dim`` entries).");

static PyObject *rank_one(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "rank_one takes 5 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t slot = PyLong_AsSsize_t(args[1]);
    Py_ssize_t dim = PyLong_AsSsize_t(args[2]);
    double weight = PyFloat_AsDouble(args[4]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_buffer scatters, vector;
    if (get_float_buffer(args[0], &scatters, 3, 1, "scatters") < 0) {
        return NULL;
    }
    int increment;
    if (get_vector(args[3], &vector, &increment, "vector") < 0) {
        PyBuffer_Release(&scatters);
        return NULL;
    }
    Py_ssize_t capacity = scatters.shape[0];
    if (scatters.shape[1] != capacity || slot < 0 || slot >= scatters.shape[2] || dim < 1 ||
        dim > capacity || vector.shape[0] < dim || capacity > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "rank_one: inconsistent shapes");
        PyBuffer_Release(&scatters);
        PyBuffer_Release(&vector);
        return NULL;
    }
    int n = (int)dim, lda = (int)capacity;
    char upper = 'U';
    double *scatter = (double *)scatters.buf + slot * capacity * capacity;
    dsyr(&upper, &n, &weight, vector.buf, &increment, scatter, &lda);  /* A += w x x^T (upper) */
    PyBuffer_Release(&scatters);
    PyBuffer_Release(&vector);
    Py_RETURN_NONE;
}

static PyObject *numpy_empty;  /* numpy.empty, for the vectors that refill makes */

/* A new read-only float64 vector of ``size`` entries: ``fill`` in the first ``offset``, zeros
   elsewhere but ``values[i]`` at ``columns[i]``. */
static PyObject *new_vector(Py_ssize_t size, Py_ssize_t offset, double fill, const double *values,
                            const Py_ssize_t *columns, Py_ssize_t n_values) {
    PyObject *vector = PyObject_CallFunction(numpy_empty, "n", size);
    if (vector == NULL) {
        return NULL;
    }
    Py_buffer view;
    if (get_float_buffer(vector, &view, 1, 1, "vector") < 0) {
        Py_DECREF(vector);
        return NULL;
    }
    double *entries = view.buf;
    for (Py_ssize_t i = 0; i < size; i++) {
        entries[i] = i < offset ? fill : 0.0;
    }
    for (Py_ssize_t i = 0; i < n_values; i++) {
        entries[columns[i]] = values[i];
    }
    PyBuffer_Release(&view);
    PyObject *flags = PyObject_GetAttrString(vector, "flags");
    if (flags == NULL || PyObject_SetAttrString(flags, "writeable", Py_False) < 0) {
        Py_XDECREF(flags);
        Py_DECREF(vector);
        return NULL;
    }
    Py_DECREF(flags);
    return vector;
}

PyDoc_STRVAR(refill_doc,
"refill(x, keys, vector, columns, offset, fill)\n"
"--\n\n"
"The dense vector of the feature dict ``x`` when it has the keys ``keys`` (a tuple, in that\n"
"order) of the sample that was encoded last, as ``vector`` at the ``columns`` (an intp array,\n"
"one a key): ``vector`` itself when every value equals its entry, else a new read-only vector\n"
"like it with x's values. None when ``x`` is not a plain dict with those keys or a value is\n"
"not a finite float or int: the caller's validation then takes it (and refuses what is\n"
"wrong, naming it).");

static PyObject *refill(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "refill takes 6 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *x = args[0], *keys = args[1], *cached = args[2];
    Py_ssize_t offset = PyLong_AsSsize_t(args[4]);
    double fill = PyFloat_AsDouble(args[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (!PyTuple_Check(keys)) {
        PyErr_SetString(PyExc_TypeError, "refill: keys must be a tuple");
        return NULL;
    }
    Py_ssize_t n_keys = PyTuple_GET_SIZE(keys);
    if (!PyDict_CheckExact(x) || PyDict_GET_SIZE(x) != n_keys) {
        Py_RETURN_NONE;
    }
    Py_buffer vector, columns;
    if (get_float_buffer(cached, &vector, 1, 0, "vector") < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[3], &columns, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vector);
        return NULL;
    }
    PyObject *result = NULL;
    double small[64];
    double *values = n_keys <= 64 ? small : PyMem_Malloc(n_keys * sizeof(double));
    const Py_ssize_t *column = columns.buf;
    Py_ssize_t size = vector.shape[0];
    const char *kind = columns.format == NULL ? "" : columns.format;
    if (columns.ndim != 1 || columns.itemsize != sizeof(Py_ssize_t) || kind[1] != '\0' ||
        (kind[0] != 'l' && kind[0] != 'q' && kind[0] != 'n') ||
        columns.shape[0] != n_keys || offset < 0 || offset > size) {
        PyErr_SetString(PyExc_ValueError, "refill: inconsistent columns");
        goto done;
    }
    if (values == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *key, *value;
    Py_ssize_t position = 0, i = 0;
    int same = 1;
    const double *entries = vector.buf;
    while (PyDict_Next(x, &position, &key, &value)) {
        PyObject *expected = PyTuple_GET_ITEM(keys, i);
        if (key != expected) {  /* the same key, or an equal one (as tuple equality has it) */
            int equal = PyObject_RichCompareBool(key, expected, Py_EQ);
            if (equal <= 0) {
                result = equal < 0 ? NULL : Py_NewRef(Py_None);
                goto done;
            }
        }
        double number;
        if (PyFloat_CheckExact(value)) {
            number = PyFloat_AS_DOUBLE(value);
        } else if (PyLong_CheckExact(value)) {
            number = PyLong_AsDouble(value);
            if (number == -1.0 && PyErr_Occurred()) {  /* beyond float range: validate */
                PyErr_Clear();
                result = Py_NewRef(Py_None);
                goto done;
            }
        } else {  /* anything else (bool, numpy scalar, str, None, ...): validate */
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (!isfinite(number) || column[i] < offset || column[i] >= size) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        same &= entries[column[i]] == number;
        values[i++] = number;
    }
    result = same ? Py_NewRef(cached) : new_vector(size, offset, fill, values, column, n_keys);
done:
    if (values != small && values != NULL) {
        PyMem_Free(values);
    }
    PyBuffer_Release(&vector);
    PyBuffer_Release(&columns);
    return result;
}

static PyMethodDef kernel_methods[] = {
    {"pair_weights", (PyCFunction)(void (*)(void))pair_weights, METH_FASTCALL, pair_weights_doc},
    {"pair_matrix", (PyCFunction)(void (*)(void))pair_matrix, METH_FASTCALL, pair_matrix_doc},
    {"outputs", (PyCFunction)(void (*)(void))outputs, METH_FASTCALL, outputs_doc},
    {"rank_one", (PyCFunction)(void (*)(void))rank_one, METH_FASTCALL, rank_one_doc},
    {"refill", (PyCFunction)(void (*)(void))refill, METH_FASTCALL, refill_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kernels_module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "The narrow step of NR-RLS in a few compiled calls (see _kernels.c).", -1,
    kernel_methods, NULL, NULL, NULL, NULL,
};

/* A routine from scipy's exported table of ``module`` (capsules named after their C
   signatures), or NULL with an ImportError. */
static void *load(const char *module, const char *name) {
    PyObject *imported = PyImport_ImportModule(module);
    if (imported == NULL) {
        return NULL;
    }
    PyObject *table = PyObject_GetAttrString(imported, "__pyx_capi__");
    Py_DECREF(imported);
    if (table == NULL) {
        return NULL;
    }
    void *routine = NULL;
    PyObject *capsule = PyDict_GetItemString(table, name);  /* borrowed */
    if (capsule == NULL) {
        PyErr_Format(PyExc_ImportError, "%s exports no %s", module, name);
    } else {
        routine = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
    }
    Py_DECREF(table);
    return routine;
}

PyMODINIT_FUNC PyInit__kernels(void) {
    dposv = (dposv_fn)load("scipy.linalg.cython_lapack", "dposv");
    dgemv = (dgemv_fn)load("scipy.linalg.cython_blas", "dgemv");
    dsyr = (dsyr_fn)load("scipy.linalg.cython_blas", "dsyr");
    if (dposv == NULL || dgemv == NULL || dsyr == NULL) {
        return NULL;
    }
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) {
        return NULL;
    }
    numpy_empty = PyObject_GetAttrString(numpy, "empty");
    Py_DECREF(numpy);
    if (numpy_empty == NULL) {
        return NULL;
    }
    return PyModule_Create(&kernels_module);
}
