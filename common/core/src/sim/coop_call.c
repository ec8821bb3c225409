/* coop_call.c: a kernel called through libffi with the arguments its LAUNCH
 * kept (coop_call.h). The only file of the kit that includes ffi.h. */
#include "coop_call.h"

#include <ffi.h>
#include <stdio.h>

#define MAX_ARGS 16 /* LAUNCH's own limit */

/* The call prepared last on this OS thread, for the LAUNCH site whose kinds
 * these are (each site has its own constant array of kinds). */
static _Thread_local struct {
    const unsigned char *kinds;
    ffi_cif cif;
    ffi_type *types[MAX_ARGS];
} prepared;

static ffi_type *ffi_type_of(unsigned char kind)
{
    switch ((enum labkit_arg_kind)kind) {
    case LABKIT_ARG_I8: return &ffi_type_sint8;
    case LABKIT_ARG_U8: return &ffi_type_uint8;
    case LABKIT_ARG_I16: return &ffi_type_sint16;
    case LABKIT_ARG_U16: return &ffi_type_uint16;
    case LABKIT_ARG_I32: return &ffi_type_sint32;
    case LABKIT_ARG_U32: return &ffi_type_uint32;
    case LABKIT_ARG_I64: return &ffi_type_sint64;
    case LABKIT_ARG_U64: return &ffi_type_uint64;
    case LABKIT_ARG_F32: return &ffi_type_float;
    case LABKIT_ARG_F64: return &ffi_type_double;
    case LABKIT_ARG_POINTER: return &ffi_type_pointer;
    case LABKIT_ARG_UNSUPPORTED: break;
    }
    return NULL;
}

static const char *kind_name(unsigned char kind)
{
    static const char *const names[] = { "int8",  "uint8",  "int16",     "uint16",
                                         "int32", "uint32", "int64",     "uint64",
                                         "float", "double", "a pointer", "a struct or union by value" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* "(a pointer, a pointer, int32)" */
static void kinds_text(const labkit_launch *l, char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "(");
    for (unsigned i = 0; i < l->argc && used < size; ++i)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", kind_name(l->kinds[i]));
    if (used < size) snprintf(out + used, size - used, ")");
}

bool coop_call_prepare(const labkit_launch *l, char *why, size_t size)
{
    if (prepared.kinds == l->kinds) return true;
    char kinds[256];
    kinds_text(l, kinds, sizeof kinds);
    if (l->argc > MAX_ARGS) {
        snprintf(why, size, "it has %u arguments; at most %d can be passed", l->argc, MAX_ARGS);
        return false;
    }
    for (unsigned i = 0; i < l->argc; ++i) {
        prepared.types[i] = ffi_type_of(l->kinds[i]);
        if (!prepared.types[i]) {
            snprintf(why, size,
                     "argument %u is %s %s: a kernel with barriers takes numbers and pointers only.\n"
                     "  hint: pass a pointer to the struct, or its fields one by one",
                     i + 1, kind_name(l->kinds[i]), kinds);
            return false;
        }
    }
    if (!l->signature_matches) {
        snprintf(
            why, size,
            "its arguments %s do not have exactly its parameters' types, which a kernel with barriers "
            "needs (its threads call it through libffi, which passes each value as it is, unconverted).\n"
            "  hint: give each argument its parameter's type: an int64_t for an int64_t, a float for a "
            "float, a const float * for a const float * (a cast, or the type of the field it comes from)",
            kinds);
        return false;
    }
    if (ffi_prep_cif(&prepared.cif, FFI_DEFAULT_ABI, l->argc, &ffi_type_void, prepared.types) != FFI_OK) {
        snprintf(why, size, "libffi cannot call it with the arguments %s", kinds);
        return false;
    }
    prepared.kinds = l->kinds;
    return true;
}

void coop_call_kernel(const labkit_launch *l)
{
    ffi_call(&prepared.cif, FFI_FN(l->kernel), NULL, (void **)l->values);
}
