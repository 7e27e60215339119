# C for the compiled engine (setup.py), read by Cython only. A C type's fields are C fields to
# compiled code; to the interpreter, Cython shows each public one through a getset descriptor,
# which it calls at every read. The interpreter reads a member descriptor (the kind a class
# with __slots__ has) without a call: it specializes the read (LOAD_ATTR_SLOT). Rule code
# reads the fields of the context, the meter and a rule at every turn, so their classes show
# their object fields as members: `fields_as_members(cls)`, called once when the module that
# defines `cls` is loaded.
#
# Only a field that holds any object becomes a member: a member's setter takes any value, and
# compiled code trusts a typed field's type. Such a field's offset is found by setting a fresh
# `object()` through its getset on a new instance and finding the one word that holds it; a
# typed field (a list, a dict, a C type) refuses that value, and a C value (a bint) holds no
# pointer to it, so those keep their getsets. Call it only on a class whose settable getsets
# are its fields (a property with a setter would be probed too). A member can be deleted,
# which leaves the field empty where compiled code expects an object: nothing deletes the
# fields of these classes (rule code cannot name them).
cdef extern from *:
    """
    #include <structmember.h>
    static int daimyo_fields_as_members(PyObject *cls_obj) {
        PyTypeObject *cls = (PyTypeObject *)cls_obj;
        PyObject *none_args = PyTuple_New(0);
        if (!none_args) return -1;
        PyObject *probe = cls->tp_new(cls, none_args, NULL);
        Py_DECREF(none_args);
        if (!probe) return -1;
        int made = 0;
        for (PyGetSetDef *gs = cls->tp_getset; gs && gs->name; gs++) {
            if (!gs->get || !gs->set) continue;
            PyObject *mark = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
            if (!mark) goto fail;
            if (gs->set(probe, mark, gs->closure) < 0) {  /* a typed field */
                PyErr_Clear();
                Py_DECREF(mark);
                continue;
            }
            Py_ssize_t at = -1, hits = 0;
            for (Py_ssize_t off = sizeof(PyObject); off + (Py_ssize_t)sizeof(PyObject *) <= cls->tp_basicsize;
                 off += sizeof(PyObject *)) {
                if (*(PyObject **)((char *)probe + off) == mark) { at = off; hits++; }
            }
            int reset = gs->set(probe, Py_None, gs->closure);
            Py_DECREF(mark);
            if (reset < 0) goto fail;
            if (hits != 1) continue;
            PyMemberDef *def = PyMem_Calloc(1, sizeof(PyMemberDef));  /* kept: the descriptor points to it */
            if (!def) { PyErr_NoMemory(); goto fail; }
            def->name = gs->name;
            def->type = T_OBJECT_EX;
            def->offset = at;
            def->doc = gs->doc;
            PyObject *descr = PyDescr_NewMember(cls, def);
            if (!descr) goto fail;
            int set = PyDict_SetItemString(cls->tp_dict, gs->name, descr);
            Py_DECREF(descr);
            if (set < 0) goto fail;
            made++;
        }
        Py_DECREF(probe);
        PyType_Modified(cls);
        return made;
    fail:
        Py_DECREF(probe);
        return -1;
    }
    """
    int fields_as_members "daimyo_fields_as_members"(type cls) except -1
