/* pyhot.c: the Python package's hot path in C: a module's warm call of a tuned
** kernel (aitune.ops._runner's two-buffer runners: a Linear's run(x, w), a
** norm's run(x, w, eps)) without the Python bytecode around the launch.
**
** Built as _aitune_hot.abi3.so against CPython's limited API (3.11): one build
** loads in every CPython from 3.11 on, so a tree built on one machine runs on a
** GPU machine with another Python. It links neither libpython nor libaitune
** nor torch: every torch call goes through the Python objects it is handed
** (tensor methods by name, torch.empty_like, the current-stream function) and
** aitune_launch_cached is called through the address ctypes gives it. What it
** saves is the interpreter's work between those calls (about 3 us of a 13 us
** forward on an H100 machine's host, bench/host_overhead.py).
**
** aitune._hot.Runner(dtype, dev, alloc, alloc_args, alloc_kw, raw, aligned,
**                    weight, failed, wsfn, block, launch, slots, nscalars, wptr)
**   dtype      torch dtype that x and the weight must be (compared by identity)
**   dev        x's device index (x.get_device()); another: the call returns None
**   alloc(*alloc_args, **alloc_kw)   the output (torch.empty_like(template), ...)
**   raw(dev)   the current stream as an int; None: stream 0 (the tests' libcuda)
**   aligned(t) t, or a contiguous 16-byte aligned copy (x off that: copied)
**   weight(c)  (c or its copy, its address), or (None, 0) for a weight the runner
**              was not made for; it raises for one the op refuses. Called when
**              c's address is not the one checked last, or c's dtype or layout
**              is off; an address it returns for c itself is remembered.
**   failed(rc, addresses, stream)   a launch returned rc: raise, or relaunch
**   wsfn(stream) the workspace's address for stream; None: no workspace
**   block      the ctypes aitune_cached block whose h and b are read at every
**              call (Registry.close() zeroes h: the launch is then refused)
**   launch     aitune_launch_cached's address
**   slots      one letter per argument of the op's launch plan: 'p' the next
**              address of (x, weight, out), 'f' the scalar (eps), 'x' unused
**   nscalars   0: run(x, w); 1: run(x, w, eps)
**   wptr       the weight address the launch was bound for (0: none)
** A call returns the output tensor, None where the caller's slow path must
** decide (another dtype or device; a weight of another shape), or raises. It
** does what aitune.ops._runner's Python body does, in the same order; the
** package uses that body where this module is absent or AITUNE_HOT=0.
**
** aitune._hot.linear(module, x) is aitune.nn.linear_forward's warm call past its
** torch.compile test (the module's runner by x's shape, the grad check, the call,
** the bias): the output, or None where the Python slow path must decide (see
** hot_linear below); setup_linear(dispatch module, torch.is_grad_enabled) binds
** what it reads, once. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "aitune.h"

typedef int (*launch_fn)(const aitune_cached *);

/* In the limited API from 3.12 on; 3.11 exports it too (Objects/call.c), only
** its declaration is outside the 3.11 limited headers. A method called this way
** makes no bound-method object and no argument tuple: a third of a tensor
** method call's cost here. */
#if Py_LIMITED_API + 0 < 0x030C0000
PyAPI_FUNC(PyObject *) PyObject_VectorcallMethod(PyObject *name, PyObject *const *args, size_t nargsf,
                                                 PyObject *kwnames);
#endif

/* The same for a plain call (in the limited API from 3.12 on, exported by 3.11). */
#if Py_LIMITED_API + 0 < 0x030C0000
PyAPI_FUNC(PyObject *) PyObject_Vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                           PyObject *kwnames);
#endif
#ifndef PY_VECTORCALL_ARGUMENTS_OFFSET
#define PY_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))
#endif

/* t.name() */
static PyObject *call0(PyObject *t, PyObject *name)
{
    return PyObject_VectorcallMethod(name, &t, 1, NULL);
}

typedef struct {
    PyObject_HEAD
    PyObject *dtype, *devobj, *alloc, *alloc_args, *alloc_kw, *raw, *aligned, *weight, *failed, *wsfn, *block;
    long dev;
    const aitune_cached *hb;      /* the block's h and b */
    launch_fn launch;
    char slots[AITUNE_CACHED_MAXARGS];
    int nslots, nscalars;
    unsigned long long seen;      /* the weight address checked last */
    int have_seen;
    unsigned long long ws_addr;   /* the workspace for ws_stream */
    void *ws_stream;
    int ws_known;
} Runner;

static PyObject *s_dtype, *s_get_device, *s_data_ptr, *s_is_contiguous;

/* An unsigned integer a Python call returned (consumed); -1 with an error set. */
static int take_u64(PyObject *o, unsigned long long *out)
{
    if (!o) return -1;
    *out = PyLong_AsUnsignedLongLong(o);
    Py_DECREF(o);
    return (*out == (unsigned long long)-1 && PyErr_Occurred()) ? -1 : 0;
}

static int data_ptr(PyObject *t, unsigned long long *out)
{
    return take_u64(call0(t, s_data_ptr), out);
}

/* 1 when t.dtype is want, 0 when not, -1 on error. */
static int has_dtype(PyObject *t, PyObject *want)
{
    PyObject *d = PyObject_GetAttr(t, s_dtype);
    if (!d) return -1;
    int same = d == want;
    Py_DECREF(d);
    return same;
}

/* 1 when o (consumed) is true, 0 when not, -1 when o is NULL (an error set) or
** its truth raised. */
static int take_truth(PyObject *o)
{
    if (!o) return -1;
    int yes = o == Py_True ? 1 : o == Py_False ? 0 : PyObject_IsTrue(o);
    Py_DECREF(o);
    return yes;
}

static int contiguous(PyObject *t)
{
    return take_truth(call0(t, s_is_contiguous));
}

/* A call's body: run(a, c) or run(a, c, eps) (runner_call, and linear's warm path
** without an argument tuple). a and c are borrowed: the caller holds them. */
static PyObject *runner_run(Runner *r, PyObject *a, PyObject *c, float eps)
{
    PyObject *out = NULL, *a_own = NULL, *c_own = NULL, *ret = NULL;

    int same = has_dtype(a, r->dtype);
    if (same < 0) return NULL;
    if (!same) Py_RETURN_NONE;
    PyObject *d = call0(a, s_get_device);
    if (!d) return NULL;
    long dev = PyLong_AsLong(d);
    Py_DECREF(d);
    if (dev == -1 && PyErr_Occurred()) return NULL;
    if (dev != r->dev) Py_RETURN_NONE;

    unsigned long long pa, pc, po, wa = 0;
    if (data_ptr(a, &pa) < 0) return NULL;
    int ok = (pa & 15) ? 0 : contiguous(a);
    if (ok < 0) return NULL;
    if (!ok) {
        a_own = PyObject_Vectorcall(r->aligned, &a, 1, NULL);
        if (!a_own || data_ptr(a_own, &pa) < 0) goto done;
    }

    if (data_ptr(c, &pc) < 0) goto done;
    ok = r->have_seen && pc == r->seen;
    if (ok) ok = has_dtype(c, r->dtype);
    if (ok > 0) ok = contiguous(c);
    if (ok < 0) goto done;
    if (!ok) {
        PyObject *w = PyObject_Vectorcall(r->weight, &c, 1, NULL);
        if (!w) goto done;
        if (!PyTuple_Check(w) || PyTuple_Size(w) != 2) {
            Py_DECREF(w);
            PyErr_SetString(PyExc_TypeError, "weight() must return (tensor or None, address)");
            goto done;
        }
        PyObject *c2 = PyTuple_GetItem(w, 0);
        if (c2 == Py_None) {
            Py_DECREF(w);
            ret = Py_None;
            Py_INCREF(ret);
            goto done;
        }
        pc = PyLong_AsUnsignedLongLong(PyTuple_GetItem(w, 1));
        if (PyErr_Occurred()) {
            Py_DECREF(w);
            goto done;
        }
        if (c2 == c) {
            r->seen = pc;
            r->have_seen = 1;
        } else {
            c_own = c2;
            Py_INCREF(c_own);
        }
        Py_DECREF(w);
    }

    out = PyObject_Call(r->alloc, r->alloc_args, r->alloc_kw);
    if (!out) goto done;
    void *s = NULL;
    if (r->raw != Py_None) {
        PyObject *so = PyObject_Vectorcall(r->raw, &r->devobj, 1, NULL);
        if (!so) goto done;
        s = PyLong_AsVoidPtr(so);
        Py_DECREF(so);
        if (PyErr_Occurred()) goto done;
    }
    if (r->wsfn != Py_None) {
        if (!r->ws_known || r->ws_stream != s) {
            PyObject *so = PyLong_FromVoidPtr(s);
            if (!so) goto done;
            PyObject *w = PyObject_Vectorcall(r->wsfn, &so, 1, NULL);
            Py_DECREF(so);
            if (take_u64(w, &wa) < 0) goto done;
            r->ws_addr = wa;
            r->ws_stream = s;
            r->ws_known = 1;
        }
        wa = r->ws_addr;
    }
    if (data_ptr(out, &po) < 0) goto done;

    aitune_cached blk;
    memset(&blk, 0, sizeof blk);
    blk.h = r->hb->h;
    blk.b = r->hb->b;
    blk.stream = s;
    const unsigned long long ptrs[3] = { pa, pc, po };
    int np = 0;
    for (int i = 0; i < r->nslots; i++) {
        if (r->slots[i] == 'p') blk.args[i].ptr = ptrs[np++];
        else if (r->slots[i] == 'f') blk.args[i].f32 = eps;
    }
    blk.args[r->nslots].ptr = wa;

    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = r->launch(&blk);
    Py_END_ALLOW_THREADS
    if (rc) {
        PyObject *vals = r->nscalars
            ? Py_BuildValue(r->wsfn != Py_None ? "(KKKdK)" : "(KKKd)", pa, pc, po, (double)eps, wa)
            : Py_BuildValue(r->wsfn != Py_None ? "(KKKK)" : "(KKK)", pa, pc, po, wa);
        if (!vals) goto done;
        PyObject *rco = PyLong_FromLong(rc), *so = PyLong_FromVoidPtr(s);
        PyObject *fargs[3] = { rco, vals, so };
        PyObject *f = rco && so ? PyObject_Vectorcall(r->failed, fargs, 3, NULL) : NULL;
        Py_XDECREF(rco);
        Py_XDECREF(so);
        Py_DECREF(vals);
        if (!f) goto done;
        Py_DECREF(f);
    }
    ret = out;
    out = NULL;
done:
    Py_XDECREF(out);
    Py_XDECREF(a_own);
    Py_XDECREF(c_own);
    return ret;
}

static PyObject *runner_call(PyObject *self, PyObject *args, PyObject *kw)
{
    Runner *r = (Runner *)self;
    float eps = 0.0f;
    Py_ssize_t n = PyTuple_Size(args);
    if (kw || n != 2 + r->nscalars) {
        PyErr_Format(PyExc_TypeError, "a runner takes %d positional arguments", 2 + r->nscalars);
        return NULL;
    }
    if (r->nscalars) {
        eps = (float)PyFloat_AsDouble(PyTuple_GetItem(args, 2));
        if (PyErr_Occurred()) return NULL;
    }
    return runner_run(r, PyTuple_GetItem(args, 0), PyTuple_GetItem(args, 1), eps);
}

/* ---- aitune.nn.linear_forward's warm path ----
**
** linear(module, x): what linear_forward does in Python once it knows it is not
** traced by torch.compile (that test stays in Python, where Dynamo folds it):
**   st = module.__dict__["_aitune"]; st.d is aitune.dispatch._current;
**   run = st.fast.get(x.shape); p = module._parameters; w = p["weight"];
**   grad mode on: x, w or p.get("bias") requiring grad -> None;
**   out = run(x, w) (a Runner's body called straight, without an argument tuple;
**   any other callable, e.g. the Python runners, through vectorcall);
**   b = p.get("bias"); b is not None: out.add_(b); return out.
** It returns None wherever the Python body would call _linear_slow (no state, another
** dispatcher, no runner for the shape, a runner that returned None, something that
** requires grad: the slow path raises the package's error), and raises what the
** steps raise (x without a shape, a runner's error, add_'s).
** setup_linear(dispatch_module, is_grad_enabled) binds aitune.dispatch's
** namespace (its _current is read at every call) and torch.is_grad_enabled;
** calling it again rebinds them. */
static PyObject *lin_ddict, *lin_grad;
static PyObject *runner_type;
static PyObject *s_current, *s_aitune, *s_parameters, *s_weight, *s_bias, *s_d, *s_fast, *s_shape,
    *s_requires_grad, *s_add_;

static PyObject *setup_linear(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2 || !PyModule_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "setup_linear(dispatch module, is_grad_enabled)");
        return NULL;
    }
    PyObject *dd = PyModule_GetDict(args[0]);
    if (!dd) return NULL;
    PyObject *old[2] = { lin_ddict, lin_grad };
    Py_INCREF(dd);
    Py_INCREF(args[1]);
    lin_ddict = dd;
    lin_grad = args[1];
    for (int i = 0; i < 2; i++) Py_XDECREF(old[i]);
    Py_RETURN_NONE;
}

/* 1 when t.requires_grad is true, 0 when not, -1 on error. */
static int requires_grad(PyObject *t)
{
    return take_truth(PyObject_GetAttr(t, s_requires_grad));
}

static PyObject *hot_linear(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "linear(module, x)");
        return NULL;
    }
    if (!lin_ddict) {
        PyErr_SetString(PyExc_RuntimeError, "_aitune_hot.linear called before setup_linear");
        return NULL;
    }
    PyObject *self = args[0], *x = args[1];
    PyObject *st = NULL, *d = NULL, *fast = NULL, *shape = NULL, *run = NULL, *p = NULL, *w = NULL, *b = NULL,
             *out = NULL, *ret = NULL;
    /* The Python body reads self._aitune (an instance attribute: nn.py keeps it in
    ** the module's __dict__), where a module without one takes the slow path. */
    PyObject *dict = PyObject_GenericGetDict(self, NULL);
    if (!dict) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    st = PyDict_GetItemWithError(dict, s_aitune);
    if (!st) goto none;
    Py_INCREF(st);
    if (!(d = PyObject_GetAttr(st, s_d))) goto done;
    if (PyDict_GetItemWithError(lin_ddict, s_current) != d) goto none;
    if (!(fast = PyObject_GetAttr(st, s_fast))) goto done;
    if (!PyDict_Check(fast)) goto none;
    if (!(shape = PyObject_GetAttr(x, s_shape))) goto done;
    run = PyDict_GetItemWithError(fast, shape);
    if (!run || run == Py_None) goto none;
    Py_INCREF(run);
    p = PyDict_GetItemWithError(dict, s_parameters);
    if (!p || !PyDict_Check(p)) goto none;
    Py_INCREF(p);
    w = PyDict_GetItemWithError(p, s_weight);
    if (!w || w == Py_None) goto none;
    Py_INCREF(w);
    b = PyDict_GetItemWithError(p, s_bias);
    if (!b && PyErr_Occurred()) goto done;
    if (b == Py_None) b = NULL;
    Py_XINCREF(b);

    int req = take_truth(PyObject_Vectorcall(lin_grad, NULL, 0, NULL));
    if (req > 0) {
        req = requires_grad(x);
        if (!req) req = requires_grad(w);
        if (!req && b) req = requires_grad(b);
        if (req > 0) goto none;   /* _linear_slow raises the package's error */
    }
    if (req < 0) goto done;

    if (Py_TYPE(run) == (PyTypeObject *)runner_type && ((Runner *)run)->nscalars == 0) {
        out = runner_run((Runner *)run, x, w, 0.0f);
    } else {
        PyObject *cargs[3] = { NULL, x, w };
        out = PyObject_Vectorcall(run, cargs + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    }
    if (!out) goto done;
    if (out == Py_None) goto none;
    if (b) {
        PyObject *margs[2] = { out, b };
        PyObject *r = PyObject_VectorcallMethod(s_add_, margs, 2, NULL);
        if (!r) goto done;
        Py_DECREF(r);
    }
    ret = out;
    out = NULL;
    goto done;
none:
    if (!PyErr_Occurred()) {
        ret = Py_None;
        Py_INCREF(ret);
    }
done:
    Py_DECREF(dict);
    Py_XDECREF(st);
    Py_XDECREF(d);
    Py_XDECREF(fast);
    Py_XDECREF(shape);
    Py_XDECREF(run);
    Py_XDECREF(p);
    Py_XDECREF(w);
    Py_XDECREF(b);
    Py_XDECREF(out);
    return ret;
}

static PyObject *runner_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *dtype, *alloc, *alloc_args, *alloc_kw, *raw, *aligned, *weight, *failed, *wsfn, *block;
    long dev;
    unsigned long long launch, block_addr, wptr;
    const char *slots;
    int nscalars;
    (void)kw;
    if (!PyArg_ParseTuple(args, "OlOOOOOOOOOKKsiK:Runner", &dtype, &dev, &alloc, &alloc_args, &alloc_kw, &raw,
                          &aligned, &weight, &failed, &wsfn, &block, &block_addr, &launch, &slots, &nscalars,
                          &wptr))
        return NULL;
    size_t ns = strlen(slots);
    if (ns >= AITUNE_CACHED_MAXARGS || strspn(slots, "pfx") != ns || nscalars < 0 || nscalars > 1
        || !PyTuple_Check(alloc_args) || (alloc_kw != Py_None && !PyDict_Check(alloc_kw)) || !launch
        || !block_addr) {
        PyErr_SetString(PyExc_ValueError, "Runner: bad slots, nscalars, alloc arguments or addresses");
        return NULL;
    }
    allocfunc tp_alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    Runner *r = (Runner *)tp_alloc(type, 0);
    if (!r) return NULL;
    r->devobj = PyLong_FromLong(dev);
    if (!r->devobj) {
        Py_DECREF(r);
        return NULL;
    }
    PyObject **keep[] = { &r->dtype, &r->alloc, &r->alloc_args, &r->alloc_kw, &r->raw, &r->aligned,
                          &r->weight, &r->failed, &r->wsfn, &r->block };
    PyObject *vals[] = { dtype, alloc, alloc_args, alloc_kw == Py_None ? NULL : alloc_kw, raw, aligned,
                         weight, failed, wsfn, block };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        Py_XINCREF(vals[i]);
        *keep[i] = vals[i];
    }
    r->dev = dev;
    r->hb = (const aitune_cached *)(uintptr_t)block_addr;
    r->launch = (launch_fn)(uintptr_t)launch;
    memcpy(r->slots, slots, ns);
    r->nslots = (int)ns;
    r->nscalars = nscalars;
    r->seen = wptr;
    r->have_seen = wptr != 0;
    return (PyObject *)r;
}

static void runner_dealloc(PyObject *self)
{
    Runner *r = (Runner *)self;
    Py_XDECREF(r->dtype);
    Py_XDECREF(r->devobj);
    Py_XDECREF(r->alloc);
    Py_XDECREF(r->alloc_args);
    Py_XDECREF(r->alloc_kw);
    Py_XDECREF(r->raw);
    Py_XDECREF(r->aligned);
    Py_XDECREF(r->weight);
    Py_XDECREF(r->failed);
    Py_XDECREF(r->wsfn);
    Py_XDECREF(r->block);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot runner_slots[] = {
    { Py_tp_new, runner_new },
    { Py_tp_call, runner_call },
    { Py_tp_dealloc, runner_dealloc },
    { Py_tp_doc, "A warm call of a bound aitune kernel (see src/pyhot.c)." },
    { 0, NULL },
};

static PyType_Spec runner_spec = {
    "aitune._hot.Runner", sizeof(Runner), 0, Py_TPFLAGS_DEFAULT, runner_slots,
};

static PyMethodDef hot_methods[] = {
    { "linear", (PyCFunction)(void (*)(void))hot_linear, METH_FASTCALL,
      "linear(module, x): aitune.nn.linear_forward's warm call, or None (see src/pyhot.c)." },
    { "setup_linear", (PyCFunction)(void (*)(void))setup_linear, METH_FASTCALL,
      "setup_linear(dispatch_module, is_grad_enabled): what linear() reads (see src/pyhot.c)." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef hot_module = {
    PyModuleDef_HEAD_INIT, "_aitune_hot", "aitune's hot path in C (src/pyhot.c).", -1, hot_methods, NULL, NULL, NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__aitune_hot(void)
{
    s_dtype = PyUnicode_InternFromString("dtype");
    s_get_device = PyUnicode_InternFromString("get_device");
    s_data_ptr = PyUnicode_InternFromString("data_ptr");
    s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
    if (!s_dtype || !s_get_device || !s_data_ptr || !s_is_contiguous) return NULL;
    PyObject **names[] = { &s_current, &s_aitune, &s_parameters, &s_weight, &s_bias, &s_d, &s_fast, &s_shape,
                           &s_requires_grad, &s_add_ };
    const char *texts[] = { "_current", "_aitune", "_parameters", "weight", "bias", "d", "fast", "shape",
                            "requires_grad", "add_" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*names[i] = PyUnicode_InternFromString(texts[i]))) return NULL;
    PyObject *m = PyModule_Create(&hot_module);
    if (!m) return NULL;
    PyObject *t = PyType_FromSpec(&runner_spec);
    if (!t || PyModule_AddObject(m, "Runner", t) < 0) {
        Py_XDECREF(t);
        Py_DECREF(m);
        return NULL;
    }
    Py_XDECREF(runner_type);
    runner_type = t;          /* the module's reference (AddObject took t's) ... */
    Py_INCREF(runner_type);   /* ... and linear()'s, for its type test */
    PyObject *v = PyLong_FromLong(AITUNE_CACHED_MAXARGS);
    if (!v || PyModule_AddObject(m, "CACHED_MAXARGS", v) < 0) {
        Py_XDECREF(v);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
