// The autograd engine's routing loop in C++ (ember.aten._C._run_backward_graph).
//
// ember.autograd's Engine (engine.py) runs a backward graph of Python Nodes; this is its
// per-node bookkeeping without the interpreter in between: counting each node's dependencies,
// the input buffers, the ready queue, and moving each returned gradient into the buffer of
// the node its edge points at. Everything a node *does* stays Python and is called from here:
// `node.apply(grads)`, `node.release_variables()`, and the engine's own helpers for the rare
// cases (tensor pre-hooks, a node with hooks or several gradients, a gradient that must be
// summed / cast / checked against its input, a target of grad()). engine.py's `_run_graph` is
// the same loop in Python, the reference this one follows step for step:
//
//   deps = for each node reachable from root, the number of edges pointing at it
//   route(root, root_grads); then while a node is ready:
//     fn = the ready node with the highest _seq (first come, first run among equals)
//     grads = fn's input buffer (taken out)
//     if fn._tensor_pre_hooks is not None or fn is an AccumulateGrad: grads = tensor_pre_hooks(fn, grads)
//     if fn in captures and not capture(fn, grads): nothing to run or send from fn
//     plain (no anomaly mode, no dispatch trace), one gradient, not None, no node hooks:
//       outputs = fn.apply(grads); without keep_graph fn.release_variables()
//     else: outputs = call_function(fn, grads, keep_graph)
//     route(fn, outputs), then drop outputs (the buffers alone hold the gradients: AccumulateGrad
//     may steal one)
//   route(fn, outputs): outputs has one gradient per fn.next_edges (else "returned an incorrect
//   number of gradients"); for each edge (nxt, nr) (skipped: None, and nxt not in `useful`):
//     g = outputs[i]; buffer = buffers.setdefault(nxt, [None] * len(nxt._input_meta))
//     if g is not None: meta = nxt._input_meta[nr]
//       if meta is not None and (g is sparse or not meta_matches(g, meta)): g = validate(fn, i, g, meta)
//       buffer[nr] = g if buffer[nr] is None else buffer[nr] + g
//     deps[nxt] -= 1; at 0 nxt is ready
//
// All state is local to one call (a hook or a custom Function may run another backward
// inside it) and every reference is owned by the call until it returns, by error too.
#include <ember/aten/python/casters.h>
#include "interned.h"

#include <queue>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
using namespace ember::at;
namespace names = ember::at::python::names;

namespace ember::at::python {
// 1 when the Tensor object `t` has exactly the (sizes, dtype, backend bits) of `meta` (a
// 3-tuple), 0 when not, -1 with an exception set (csrc/python/dispatch_entry.cpp).
int tensor_meta_matches(PyObject* t, PyObject* meta);
}  // namespace ember::at::python

namespace {

// An owned reference, released at scope exit.
struct Ref {
  PyObject* p = nullptr;
  Ref() = default;
  explicit Ref(PyObject* o) : p(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { Py_XDECREF(p); }
  void reset(PyObject* o = nullptr) {
    PyObject* old = p;
    p = o;
    Py_XDECREF(old);
  }
  PyObject* release() {
    PyObject* o = p;
    p = nullptr;
    return o;
  }
  explicit operator bool() const { return p != nullptr; }
};

struct NodeState {
  Py_ssize_t deps = 0;
  PyObject* buffer = nullptr;  // owned: the node's input buffer (a list), made on its first incoming edge
};

struct Ready {
  unsigned long long seq;
  unsigned long long order;  // first come, first run among equal sequence numbers
  PyObject* node;            // borrowed: the state map holds it
};

struct ReadyLater {
  bool operator()(const Ready& a, const Ready& b) const { return a.seq != b.seq ? a.seq < b.seq : a.order > b.order; }
};

// The helpers engine.py passes: what the loop calls for the uncommon cases.
struct Helpers {
  PyObject* accumulate_grad_cls;  // AccumulateGrad: its tensor pre-hooks are the leaf's hooks
  PyObject* sparse_cls;           // SparseTensor: always validated
  PyObject* tensor_pre_hooks;     // (fn, grads) -> grads
  PyObject* call_function;        // (fn, grads, keep_graph) -> outputs
  PyObject* validate;             // (fn, i, g, meta) -> g
};

struct Graph {
  std::unordered_map<PyObject*, NodeState> nodes;  // each key holds a reference to its node
  ~Graph() {
    for (auto& kv : nodes) {
      Py_XDECREF(kv.second.buffer);
      Py_DECREF(kv.first);
    }
  }
};

// The edge `e` (a (node, input_nr) tuple, or None): node (borrowed) and input_nr; false with an
// exception set. node is null for None.
bool unpack_edge(PyObject* e, PyObject*& node, Py_ssize_t& nr) {
  node = nullptr;
  if (e == Py_None) return true;
  if (PyTuple_Check(e) && PyTuple_GET_SIZE(e) == 2) {
    node = PyTuple_GET_ITEM(e, 0);
    nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(e, 1));
    return !(nr == -1 && PyErr_Occurred());
  }
  PyErr_Format(PyExc_TypeError, "backward: a node's next_edges holds %s, not a (node, input_nr) pair or None",
               Py_TYPE(e)->tp_name);
  return false;
}

// next_edges of `fn` as a tuple or list (PySequence_Fast); null with an exception set.
PyObject* edges_of(PyObject* fn) {
  Ref edges(PyObject_GetAttr(fn, names::next_edges));
  if (!edges) return nullptr;
  return PySequence_Fast(edges.p, "backward: a node's next_edges must be a sequence");
}

bool count_dependencies(PyObject* root, Graph& g) {
  std::vector<PyObject*> stack{root};
  while (!stack.empty()) {
    PyObject* fn = stack.back();
    stack.pop_back();
    Ref edges(edges_of(fn));
    if (!edges) return false;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(edges.p);
    PyObject** items = PySequence_Fast_ITEMS(edges.p);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* nxt;
      Py_ssize_t nr;
      if (!unpack_edge(items[i], nxt, nr)) return false;
      if (nxt == nullptr) continue;
      auto [it, fresh] = g.nodes.try_emplace(nxt);
      if (fresh) {
        Py_INCREF(nxt);
        stack.push_back(nxt);
      }
      ++it->second.deps;
    }
  }
  return true;
}

// Whether the attribute `name` of `fn` is None (a node's hooks default to None on its class).
int attr_is_none(PyObject* fn, PyObject* name) {
  Ref v(PyObject_GetAttr(fn, name));
  if (!v) return -1;
  return v.p == Py_None ? 1 : 0;
}

// RuntimeError "Function <name> returned an incorrect number of gradients ...".
void wrong_count(PyObject* fn, Py_ssize_t expected, Py_ssize_t got) {
  Ref name(PyObject_CallMethodNoArgs(fn, names::name));
  if (!name) return;
  PyErr_Format(PyExc_RuntimeError, "Function %S returned an incorrect number of gradients (expected %zd, got %zd)",
               name.p, expected, got);
}

// Moves `outputs` (fn's gradients, one per edge) into the buffers of the nodes they go to and
// queues the nodes this makes ready.
bool route(PyObject* fn, PyObject* outputs, Graph& graph, PyObject* useful, const Helpers& h,
           std::priority_queue<Ready, std::vector<Ready>, ReadyLater>& ready, unsigned long long& order) {
  Ref edges(edges_of(fn));
  if (!edges) return false;
  Ref outs(PySequence_Fast(outputs, "backward: a node's apply must return a sequence of gradients"));
  if (!outs) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(edges.p);
  if (PySequence_Fast_GET_SIZE(outs.p) != n) {
    wrong_count(fn, n, PySequence_Fast_GET_SIZE(outs.p));
    return false;
  }
  PyObject** es = PySequence_Fast_ITEMS(edges.p);
  PyObject** gs = PySequence_Fast_ITEMS(outs.p);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* nxt;
    Py_ssize_t nr = 0;
    if (!unpack_edge(es[i], nxt, nr)) return false;
    if (nxt == nullptr) continue;
    if (useful != Py_None) {
      const int in = PySet_Contains(useful, nxt);
      if (in < 0) return false;
      if (in == 0) continue;
    }
    auto it = graph.nodes.find(nxt);
    if (it == graph.nodes.end()) {
      PyErr_SetString(PyExc_RuntimeError, "backward: the graph changed while it was being run");
      return false;
    }
    NodeState& st = it->second;
    PyObject* g = gs[i];
    if (st.buffer == nullptr || g != Py_None) {
      Ref meta_all(PyObject_GetAttr(nxt, names::input_meta));
      if (!meta_all) return false;
      if (st.buffer == nullptr) {
        const Py_ssize_t k = PyObject_Size(meta_all.p);
        if (k < 0) return false;
        st.buffer = PyList_New(k);
        if (st.buffer == nullptr) return false;
        for (Py_ssize_t j = 0; j < k; ++j) {
          Py_INCREF(Py_None);
          PyList_SET_ITEM(st.buffer, j, Py_None);
        }
      }
      if (g != Py_None) {
        Ref meta(PySequence_GetItem(meta_all.p, nr));
        if (!meta) return false;
        Ref fixed;
        if (meta.p != Py_None) {
          int ok = 0;
          if (Py_TYPE(g) != reinterpret_cast<PyTypeObject*>(h.sparse_cls)) {
            if (!python::is_tensor_object(g) || !PyTuple_Check(meta.p) || PyTuple_GET_SIZE(meta.p) != 3) {
              PyErr_SetString(PyExc_TypeError, "_meta_matches(tensor, (sizes, dtype, backend))");  // engine.py's error
              return false;
            }
            ok = python::tensor_meta_matches(g, meta.p);
            if (ok < 0) return false;
          }
          if (!ok) {
            Ref idx(PyLong_FromSsize_t(i));
            if (!idx) return false;
            fixed.reset(PyObject_CallFunctionObjArgs(h.validate, fn, idx.p, g, meta.p, nullptr));
            if (!fixed) return false;
            g = fixed.p;
          }
        }
        if (nr < 0 || nr >= PyList_GET_SIZE(st.buffer)) {
          PyErr_SetString(PyExc_IndexError, "list index out of range");
          return false;
        }
        PyObject* old = PyList_GET_ITEM(st.buffer, nr);
        PyObject* sum;
        if (old == Py_None) {
          Py_INCREF(g);
          sum = g;
        } else {
          sum = PyNumber_Add(old, g);
          if (sum == nullptr) return false;
        }
        PyList_SET_ITEM(st.buffer, nr, sum);
        Py_DECREF(old);
      }
    }
    if (--st.deps == 0) {
      Ref seq(PyObject_GetAttr(nxt, names::seq));
      if (!seq) return false;
      const unsigned long long s = PyLong_AsUnsignedLongLong(seq.p);
      if (s == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
      ready.push(Ready{s, ++order, nxt});
    }
  }
  return true;
}

// _run_backward_graph(root, root_grads, keep_graph, plain, useful, captures, capture, helpers)
PyObject* run_graph(PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 8 || !PyTuple_Check(args[7]) || PyTuple_GET_SIZE(args[7]) != 5 ||
      !PyType_Check(PyTuple_GET_ITEM(args[7], 0)) || !PyType_Check(PyTuple_GET_ITEM(args[7], 1))) {
    PyErr_SetString(PyExc_TypeError,
                    "_run_backward_graph(root, root_grads, keep_graph, plain, useful, captures, capture, "
                    "(AccumulateGrad, SparseTensor, tensor_pre_hooks, call_function, validate))");
    return nullptr;
  }
  PyObject* root = args[0];
  const int keep_graph = PyObject_IsTrue(args[2]);
  const int plain = PyObject_IsTrue(args[3]);
  if (keep_graph < 0 || plain < 0) return nullptr;
  PyObject* useful = args[4];
  PyObject* captures = args[5];
  PyObject* capture = args[6];
  if ((useful != Py_None && !PyAnySet_Check(useful)) || (captures != Py_None && !PyDict_Check(captures))) {
    PyErr_SetString(PyExc_TypeError, "_run_backward_graph: useful must be a set or None, captures a dict or None");
    return nullptr;
  }
  PyObject* const* hp = &PyTuple_GET_ITEM(args[7], 0);
  const Helpers h{hp[0], hp[1], hp[2], hp[3], hp[4]};
  Ref keep(PyBool_FromLong(keep_graph));

  Graph graph;
  if (!count_dependencies(root, graph)) return nullptr;
  std::priority_queue<Ready, std::vector<Ready>, ReadyLater> ready;
  unsigned long long order = 0;
  if (!route(root, args[1], graph, useful, h, ready, order)) return nullptr;
  while (!ready.empty()) {
    PyObject* fn = ready.top().node;
    ready.pop();
    NodeState& st = graph.nodes[fn];
    Ref grads(st.buffer);
    st.buffer = nullptr;
    if (Py_TYPE(fn) == reinterpret_cast<PyTypeObject*>(h.accumulate_grad_cls)) {
      grads.reset(PyObject_CallFunctionObjArgs(h.tensor_pre_hooks, fn, grads.p, nullptr));
    } else {
      const int none = attr_is_none(fn, names::tensor_pre_hooks);
      if (none < 0) return nullptr;
      if (!none) grads.reset(PyObject_CallFunctionObjArgs(h.tensor_pre_hooks, fn, grads.p, nullptr));
    }
    if (!grads) return nullptr;
    if (captures != Py_None) {
      PyObject* hit = PyDict_GetItemWithError(captures, fn);
      if (hit == nullptr && PyErr_Occurred()) return nullptr;
      if (hit != nullptr) {
        Ref go_on(PyObject_CallFunctionObjArgs(capture, fn, grads.p, nullptr));
        if (!go_on) return nullptr;
        const int t = PyObject_IsTrue(go_on.p);
        if (t < 0) return nullptr;
        if (!t) continue;
      }
    }
    bool inline_ = false;
    if (plain && PyList_Check(grads.p) && PyList_GET_SIZE(grads.p) == 1 && PyList_GET_ITEM(grads.p, 0) != Py_None) {
      inline_ = true;
      for (PyObject* name : {names::retains_grad_hooks, names::pre_hooks, names::post_hooks}) {
        const int none = attr_is_none(fn, name);
        if (none < 0) return nullptr;
        if (!none) {
          inline_ = false;
          break;
        }
      }
    }
    Ref outputs;
    if (inline_) {
      // the common node (one gradient in, no hooks): what call_function does, without the call
      outputs.reset(PyObject_CallMethodOneArg(fn, names::apply, grads.p));
      if (!outputs) return nullptr;
      if (!keep_graph) {
        Ref r(PyObject_CallMethodNoArgs(fn, names::release_variables));
        if (!r) return nullptr;
      }
    } else {
      outputs.reset(PyObject_CallFunctionObjArgs(h.call_function, fn, grads.p, keep.p, nullptr));
      if (!outputs) return nullptr;
    }
    grads.reset();
    // the buffers alone hold the gradients once `outputs` goes: AccumulateGrad may steal one
    if (!route(fn, outputs.p, graph, useful, h, ready, order)) return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* run_backward_graph(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    return run_graph(args, nargs);
  } catch (...) {  // std::bad_alloc from the containers
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyMethodDef methods[] = {
    {"_run_backward_graph", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&run_backward_graph)),
     METH_FASTCALL,
     "_run_backward_graph(root, root_grads, keep_graph, plain, useful, captures, capture, helpers): ember.autograd's "
     "Engine loop (engine.py's _run_graph) in C++."},
};

}  // namespace

void init_autograd_engine(py::module_& m) {
  for (auto& def : methods) {
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.attr(def.ml_name) = py::reinterpret_steal<py::object>(fn);
  }
}
