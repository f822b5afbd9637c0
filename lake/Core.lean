prelude
/-!
# Core: trust base for the natural-number step checker

Self-contained `prelude` module (no `Init`, no tactics, no notation).
The *statements* the checker trusts are the definitions below:
the inductive type `N`, `N.add`, `N.mul`, and equality `Eq`.
Everything else is a kernel-checked term proof; no axioms, no `sorry`.
Recursion is on the second argument:
  `N.add n zero = n`,  `N.add n (succ m) = succ (N.add n m)`,
  `N.mul n zero = zero`, `N.mul n (succ m) = N.add (N.mul n m) n`
(all four hold by `rfl`).
-/

universe u v

/-! ## Equality -/

inductive Eq {α : Sort u} : α → α → Prop where
  | refl (a : α) : Eq a a

theorem rfl {α : Sort u} {a : α} : Eq a a := Eq.refl a

/-- Non-dependent elimination for `Eq` (transport along an equation). -/
noncomputable abbrev Eq.ndrec {α : Sort u} {a : α} {motive : α → Sort v} (m : motive a) {b : α}
    (h : Eq a b) : motive b :=
  Eq.rec (motive := fun x _ => motive x) m h

theorem Eq.symm {α : Sort u} {a b : α} (h : Eq a b) : Eq b a :=
  Eq.ndrec (motive := fun x => Eq x a) rfl h

theorem Eq.trans {α : Sort u} {a b c : α} (h₁ : Eq a b) (h₂ : Eq b c) : Eq a c :=
  Eq.ndrec (motive := fun x => Eq a x) h₁ h₂

theorem congrArg {α : Sort u} {β : Sort v} {a₁ a₂ : α} (f : α → β) (h : Eq a₁ a₂) :
    Eq (f a₁) (f a₂) :=
  Eq.ndrec (motive := fun x => Eq (f a₁) (f x)) rfl h

/-! ## Natural numbers, addition, multiplication (trusted definitions) -/

inductive N where
  | zero : N
  | succ (n : N) : N

noncomputable def N.add (n m : N) : N :=
  N.rec (motive := fun _ => N) n (fun _ ih => N.succ ih) m

noncomputable def N.mul (n m : N) : N :=
  N.rec (motive := fun _ => N) N.zero (fun _ ih => N.add ih n) m

/-! ## Addition lemmas -/

theorem N.add_zero (n : N) : Eq (N.add n N.zero) n := rfl

theorem N.add_succ (n m : N) : Eq (N.add n (N.succ m)) (N.succ (N.add n m)) := rfl

theorem N.zero_add (n : N) : Eq (N.add N.zero n) n :=
  N.rec (motive := fun n => Eq (N.add N.zero n) n)
    rfl
    (fun _ ih => congrArg N.succ ih)
    n

theorem N.succ_add (n m : N) : Eq (N.add (N.succ n) m) (N.succ (N.add n m)) :=
  N.rec (motive := fun m => Eq (N.add (N.succ n) m) (N.succ (N.add n m)))
    rfl
    (fun _ ih => congrArg N.succ ih)
    m

theorem N.add_comm (n m : N) : Eq (N.add n m) (N.add m n) :=
  N.rec (motive := fun m => Eq (N.add n m) (N.add m n))
    (Eq.symm (N.zero_add n))
    -- succ (n + m) = succ (m + n) = succ m + n
    (fun m ih => Eq.trans (congrArg N.succ ih) (Eq.symm (N.succ_add m n)))
    m

theorem N.add_assoc (n m k : N) : Eq (N.add (N.add n m) k) (N.add n (N.add m k)) :=
  N.rec (motive := fun k => Eq (N.add (N.add n m) k) (N.add n (N.add m k)))
    rfl
    (fun _ ih => congrArg N.succ ih)
    k

/-! ## Multiplication lemmas -/

theorem N.mul_zero (n : N) : Eq (N.mul n N.zero) N.zero := rfl

theorem N.mul_succ (n m : N) : Eq (N.mul n (N.succ m)) (N.add (N.mul n m) n) := rfl

theorem N.zero_mul (n : N) : Eq (N.mul N.zero n) N.zero :=
  N.rec (motive := fun n => Eq (N.mul N.zero n) N.zero)
    rfl
    -- 0 * succ n unfolds to 0 * n + 0, which is 0 * n by definition
    (fun _ ih => ih)
    n

theorem N.succ_mul (n m : N) : Eq (N.mul (N.succ n) m) (N.add (N.mul n m) m) :=
  N.rec (motive := fun m => Eq (N.mul (N.succ n) m) (N.add (N.mul n m) m))
    rfl
    -- both sides unfold to `succ (_ + _)`; show
    -- succ n * m + n = (n * m + m) + n = n * m + (m + n) = n * m + (n + m) = (n * m + n) + m
    (fun m ih => congrArg N.succ
      (Eq.trans (congrArg (fun t => N.add t n) ih)
      (Eq.trans (N.add_assoc (N.mul n m) m n)
      (Eq.trans (congrArg (fun t => N.add (N.mul n m) t) (N.add_comm m n))
                (Eq.symm (N.add_assoc (N.mul n m) n m))))))
    m

theorem N.mul_comm (n m : N) : Eq (N.mul n m) (N.mul m n) :=
  N.rec (motive := fun m => Eq (N.mul n m) (N.mul m n))
    (Eq.symm (N.zero_mul n))
    -- n * succ m = n * m + n = m * n + n = succ m * n
    (fun m ih => Eq.trans (congrArg (fun t => N.add t n) ih) (Eq.symm (N.succ_mul m n)))
    m

theorem N.left_distrib (n m k : N) :
    Eq (N.mul n (N.add m k)) (N.add (N.mul n m) (N.mul n k)) :=
  N.rec (motive := fun k => Eq (N.mul n (N.add m k)) (N.add (N.mul n m) (N.mul n k)))
    rfl
    -- n * (m + succ k) unfolds to n * (m + k) + n = (n * m + n * k) + n = n * m + (n * k + n)
    (fun k ih => Eq.trans (congrArg (fun t => N.add t n) ih)
      (N.add_assoc (N.mul n m) (N.mul n k) n))
    k

theorem N.right_distrib (n m k : N) :
    Eq (N.mul (N.add n m) k) (N.add (N.mul n k) (N.mul m k)) :=
  -- (n + m) * k = k * (n + m) = k * n + k * m = n * k + m * k
  Eq.trans (N.mul_comm (N.add n m) k)
  (Eq.trans (N.left_distrib k n m)
  (Eq.trans (congrArg (fun t => N.add t (N.mul k m)) (N.mul_comm k n))
            (congrArg (fun t => N.add (N.mul n k) t) (N.mul_comm k m))))

theorem N.mul_assoc (n m k : N) : Eq (N.mul (N.mul n m) k) (N.mul n (N.mul m k)) :=
  N.rec (motive := fun k => Eq (N.mul (N.mul n m) k) (N.mul n (N.mul m k)))
    rfl
    -- (n * m) * succ k = (n * m) * k + n * m = n * (m * k) + n * m = n * (m * k + m)
    (fun k ih => Eq.trans (congrArg (fun t => N.add t (N.mul n m)) ih)
      (Eq.symm (N.left_distrib n (N.mul m k) m)))
    k

/-! ## Congruence in one argument of a binary operation

A probe names a position by a path of `0`/`1` from the root; its proof term walks the path with
these two lemmas, leaving the operation and the other argument for Lean to infer by
unification. Where the path leaves the tree, or the lemma's left side does not match the node
it reaches, Lean itself rejects the term. -/

theorem congr_fst {f : N → N → N} {x x' : N} (y : N) (h : Eq x x') : Eq (f x y) (f x' y) :=
  congrArg (fun t => f t y) h

theorem congr_snd {f : N → N → N} (x : N) {y y' : N} (h : Eq y y') : Eq (f x y) (f x y') :=
  congrArg (f x) h
