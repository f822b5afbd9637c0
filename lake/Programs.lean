prelude
import Core
/-!
# Programs: the two register machines, evaluated by the kernel

Interpreters of the project's two register machines, in the manner of the core library: written
with recursors and finite tables only (no `match`, no structural or well-founded recursion, no
`Fin`, no type classes, no axiom), so that the kernel evaluates a program by unfolding
definitions and iota reduction alone.

- *Bits* (`namespace Bits`): values `Bit.b0`, `Bit.b1`; statements `set`, `not`, `and`, `or`, `xor`.
- *Arithmetic* (`namespace Arith`): values `Hex.h0` … `Hex.h15`, modulo 16; statements `set`, `add`,
  `sub`, `mul` and `ite` (`if x < y then z else w`).

Every operation is a table over the values' constructors (a recursor per argument). A statement
assigns one variable from operands that are variables or constants; a state is the eight values
`v0` … `v7`. `exec` runs one statement, `run` a program.

The questions a checker asks are Bool-valued checks that the kernel evaluates (`rfl`); each has a
soundness lemma below, so that a certified theorem states the fact itself, not the check:

- a step: `Eq (exec s st) st'`, from `eqState_sound`;
- a run of statements with the claimed state after each: `Steps st t` (every step's effect from
  the claimed state before it), from `check_sound`; or, when each claimed state differs from the
  one before it at most in the assigned variable, `Effects st ws` with only the assigned values
  claimed, from `checkWrites_sound`;
- an equivalence of two programs from one state: `Eq (run p st) (run q st)`, from `eqState_sound`;
- an equivalence of two Bits programs from every state: `∀ st, Eq (run p st) (run q st)`, from
  `Bits.equivAll_sound`, whose check runs both programs once on truth tables of the 256 states.

What a certificate trusts is the kernel and the statements of the definitions here and in the
core library; every lemma is itself a kernel-checked term.
-/

/-! ## Logic -/

inductive Bool where
  | false
  | true

inductive True : Prop where
  | intro

/-- Both `a` and `b`, encoded impredicatively (an inductive `And` would need the compiler's axioms,
which neither library declares). -/
noncomputable def And (a b : Prop) : Prop := ∀ (P : Prop), (a → b → P) → P

theorem And.intro {a b : Prop} (left : a) (right : b) : And a b := fun _ k => k left right

theorem And.left {a b : Prop} (h : And a b) : a := h a (fun x _ => x)

theorem And.right {a b : Prop} (h : And a b) : b := h b (fun _ y => y)

/-- Anything follows from `false = true`. -/
theorem Bool.absurd {P : Prop} (h : Eq Bool.false Bool.true) : P :=
  Eq.ndrec (motive := fun b => Bool.rec (motive := fun _ => Prop) True P b) (a := Bool.false) True.intro h

noncomputable def Bool.and (a b : Bool) : Bool :=
  Bool.rec (motive := fun _ => Bool) Bool.false b a

theorem Bool.and_left {a b : Bool} : Eq (Bool.and a b) Bool.true → Eq a Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.and a b) Bool.true → Eq a Bool.true) (fun h => h) (fun _ => rfl) a

theorem Bool.and_right {a b : Bool} : Eq (Bool.and a b) Bool.true → Eq b Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.and a b) Bool.true → Eq b Bool.true) (fun h => Bool.absurd h)
    (fun h => h) a

theorem congr2 {α β γ : Type} (f : α → β → γ) {a a' : α} {b b' : β} (ea : Eq a a') (eb : Eq b b') :
    Eq (f a b) (f a' b') :=
  Eq.ndrec (motive := fun x => Eq (f a b) (f x b')) (congrArg (f a) eb) ea

/-! ## Variables -/

/-- The variables `v0` … `v7`. -/
inductive Reg where
  | r0 | r1 | r2 | r3 | r4 | r5 | r6 | r7


/-! ## Bits: the values 0 and 1 -/

inductive Bit where
  | b0 | b1

namespace Bit

noncomputable def not (a : Bit) : Bit :=
  Bit.rec (motive := fun _ => Bit) b1 b0 a

/-- `a and b` -/
noncomputable def and (a b : Bit) : Bit :=
  Bit.rec (motive := fun _ => Bit → Bit)
    (Bit.rec (motive := fun _ => Bit) b0 b0)
    (Bit.rec (motive := fun _ => Bit) b0 b1)
    a b

/-- `a or b` -/
noncomputable def or (a b : Bit) : Bit :=
  Bit.rec (motive := fun _ => Bit → Bit)
    (Bit.rec (motive := fun _ => Bit) b0 b1)
    (Bit.rec (motive := fun _ => Bit) b1 b1)
    a b

/-- `a xor b` -/
noncomputable def xor (a b : Bit) : Bit :=
  Bit.rec (motive := fun _ => Bit → Bit)
    (Bit.rec (motive := fun _ => Bit) b0 b1)
    (Bit.rec (motive := fun _ => Bit) b1 b0)
    a b

/-- `a = b`, decided. -/
noncomputable def eq (a b : Bit) : Bool :=
  Bit.rec (motive := fun _ => Bit → Bool)
    (Bit.rec (motive := fun _ => Bool) Bool.true Bool.false)
    (Bit.rec (motive := fun _ => Bool) Bool.false Bool.true)
    a b

theorem eq_sound : ∀ (a b : Bit), Eq (eq a b) Bool.true → Eq a b :=
  fun a => Bit.rec (motive := fun a => ∀ (b : Bit), Eq (eq a b) Bool.true → Eq a b)
    (Bit.rec (motive := fun b => Eq (eq b0 b) Bool.true → Eq b0 b) (fun _ => rfl) Bool.absurd)
    (Bit.rec (motive := fun b => Eq (eq b1 b) Bool.true → Eq b1 b) Bool.absurd (fun _ => rfl))
    a

/-- `g b0` and `g b1`. -/
noncomputable def all (g : Bit → Bool) : Bool := Bool.and (g b0) (g b1)

theorem all_sound {g : Bit → Bool} (h : Eq (all g) Bool.true) : ∀ (b : Bit), Eq (g b) Bool.true :=
  fun b => Bit.rec (motive := fun b => Eq (g b) Bool.true) (Bool.and_left h) (Bool.and_right h) b

end Bit

/-! ## Arithmetic: the values modulo 16 -/

inductive Hex where
  | h0 | h1 | h2 | h3 | h4 | h5 | h6 | h7 | h8 | h9 | h10 | h11 | h12 | h13 | h14 | h15

namespace Hex

/-- `a + b` modulo 16 -/
noncomputable def add (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15)
    (Hex.rec (motive := fun _ => Hex) h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0)
    (Hex.rec (motive := fun _ => Hex) h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1)
    (Hex.rec (motive := fun _ => Hex) h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2)
    (Hex.rec (motive := fun _ => Hex) h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3)
    (Hex.rec (motive := fun _ => Hex) h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4)
    (Hex.rec (motive := fun _ => Hex) h6 h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5)
    (Hex.rec (motive := fun _ => Hex) h7 h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6)
    (Hex.rec (motive := fun _ => Hex) h8 h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7)
    (Hex.rec (motive := fun _ => Hex) h9 h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8)
    (Hex.rec (motive := fun _ => Hex) h10 h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9)
    (Hex.rec (motive := fun _ => Hex) h11 h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10)
    (Hex.rec (motive := fun _ => Hex) h12 h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11)
    (Hex.rec (motive := fun _ => Hex) h13 h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12)
    (Hex.rec (motive := fun _ => Hex) h14 h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13)
    (Hex.rec (motive := fun _ => Hex) h15 h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14)
    a b

/-- `a - b` modulo 16 -/
noncomputable def sub (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1)
    (Hex.rec (motive := fun _ => Hex) h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2)
    (Hex.rec (motive := fun _ => Hex) h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3)
    (Hex.rec (motive := fun _ => Hex) h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4)
    (Hex.rec (motive := fun _ => Hex) h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5)
    (Hex.rec (motive := fun _ => Hex) h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6)
    (Hex.rec (motive := fun _ => Hex) h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8 h7)
    (Hex.rec (motive := fun _ => Hex) h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9 h8)
    (Hex.rec (motive := fun _ => Hex) h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10 h9)
    (Hex.rec (motive := fun _ => Hex) h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11 h10)
    (Hex.rec (motive := fun _ => Hex) h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12 h11)
    (Hex.rec (motive := fun _ => Hex) h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13 h12)
    (Hex.rec (motive := fun _ => Hex) h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14 h13)
    (Hex.rec (motive := fun _ => Hex) h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15 h14)
    (Hex.rec (motive := fun _ => Hex) h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0 h15)
    (Hex.rec (motive := fun _ => Hex) h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1 h0)
    a b

/-- `a * b` modulo 16 -/
noncomputable def mul (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0 h0)
    (Hex.rec (motive := fun _ => Hex) h0 h1 h2 h3 h4 h5 h6 h7 h8 h9 h10 h11 h12 h13 h14 h15)
    (Hex.rec (motive := fun _ => Hex) h0 h2 h4 h6 h8 h10 h12 h14 h0 h2 h4 h6 h8 h10 h12 h14)
    (Hex.rec (motive := fun _ => Hex) h0 h3 h6 h9 h12 h15 h2 h5 h8 h11 h14 h1 h4 h7 h10 h13)
    (Hex.rec (motive := fun _ => Hex) h0 h4 h8 h12 h0 h4 h8 h12 h0 h4 h8 h12 h0 h4 h8 h12)
    (Hex.rec (motive := fun _ => Hex) h0 h5 h10 h15 h4 h9 h14 h3 h8 h13 h2 h7 h12 h1 h6 h11)
    (Hex.rec (motive := fun _ => Hex) h0 h6 h12 h2 h8 h14 h4 h10 h0 h6 h12 h2 h8 h14 h4 h10)
    (Hex.rec (motive := fun _ => Hex) h0 h7 h14 h5 h12 h3 h10 h1 h8 h15 h6 h13 h4 h11 h2 h9)
    (Hex.rec (motive := fun _ => Hex) h0 h8 h0 h8 h0 h8 h0 h8 h0 h8 h0 h8 h0 h8 h0 h8)
    (Hex.rec (motive := fun _ => Hex) h0 h9 h2 h11 h4 h13 h6 h15 h8 h1 h10 h3 h12 h5 h14 h7)
    (Hex.rec (motive := fun _ => Hex) h0 h10 h4 h14 h8 h2 h12 h6 h0 h10 h4 h14 h8 h2 h12 h6)
    (Hex.rec (motive := fun _ => Hex) h0 h11 h6 h1 h12 h7 h2 h13 h8 h3 h14 h9 h4 h15 h10 h5)
    (Hex.rec (motive := fun _ => Hex) h0 h12 h8 h4 h0 h12 h8 h4 h0 h12 h8 h4 h0 h12 h8 h4)
    (Hex.rec (motive := fun _ => Hex) h0 h13 h10 h7 h4 h1 h14 h11 h8 h5 h2 h15 h12 h9 h6 h3)
    (Hex.rec (motive := fun _ => Hex) h0 h14 h12 h10 h8 h6 h4 h2 h0 h14 h12 h10 h8 h6 h4 h2)
    (Hex.rec (motive := fun _ => Hex) h0 h15 h14 h13 h12 h11 h10 h9 h8 h7 h6 h5 h4 h3 h2 h1)
    a b

/-- `a < b` -/
noncomputable def lt (a b : Hex) : Bool :=
  Hex.rec (motive := fun _ => Hex → Bool)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    a b

/-- `a = b`, decided. -/
noncomputable def eq (a b : Hex) : Bool :=
  Hex.rec (motive := fun _ => Hex → Bool)
    (Hex.rec (motive := fun _ => Bool) Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true Bool.false)
    (Hex.rec (motive := fun _ => Bool) Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.false Bool.true)
    a b

theorem eq_sound : ∀ (a b : Hex), Eq (eq a b) Bool.true → Eq a b :=
  fun a => Hex.rec (motive := fun a => ∀ (b : Hex), Eq (eq a b) Bool.true → Eq a b)
    (Hex.rec (motive := fun b => Eq (eq h0 b) Bool.true → Eq h0 b) (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h1 b) Bool.true → Eq h1 b) Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h2 b) Bool.true → Eq h2 b) Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h3 b) Bool.true → Eq h3 b) Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h4 b) Bool.true → Eq h4 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h5 b) Bool.true → Eq h5 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h6 b) Bool.true → Eq h6 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h7 b) Bool.true → Eq h7 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h8 b) Bool.true → Eq h8 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h9 b) Bool.true → Eq h9 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h10 b) Bool.true → Eq h10 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h11 b) Bool.true → Eq h11 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h12 b) Bool.true → Eq h12 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h13 b) Bool.true → Eq h13 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h14 b) Bool.true → Eq h14 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl) Bool.absurd)
    (Hex.rec (motive := fun b => Eq (eq h15 b) Bool.true → Eq h15 b) Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd Bool.absurd (fun _ => rfl))
    a

/-- `g` at each of the 16 values. -/
noncomputable def all (g : Hex → Bool) : Bool :=
  Bool.and (g h0) (Bool.and (g h1) (Bool.and (g h2) (Bool.and (g h3) (Bool.and (g h4) (Bool.and (g h5) (Bool.and (g h6) (Bool.and (g h7) (Bool.and (g h8) (Bool.and (g h9) (Bool.and (g h10) (Bool.and (g h11) (Bool.and (g h12) (Bool.and (g h13) (Bool.and (g h14) (g h15)))))))))))))))

theorem all_sound {g : Hex → Bool} (h : Eq (all g) Bool.true) : ∀ (x : Hex), Eq (g x) Bool.true :=
  fun x => Hex.rec (motive := fun x => Eq (g x) Bool.true)
    (Bool.and_left h)
    (Bool.and_left (Bool.and_right h))
    (Bool.and_left (Bool.and_right (Bool.and_right h)))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right h))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))
    (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))
    (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))
    x

end Hex

/-! ## The Bits machine -/

namespace Bits

/-- An operand: a variable, or a constant. -/
inductive Opd where
  | v0 | v1 | v2 | v3 | v4 | v5 | v6 | v7
  | c0 | c1

/-- A statement: variable `t` gets `x`, `not x`, `x and y`, `x or y` or `x xor y`. -/
inductive Stmt where
  | set (t : Reg) (x : Opd)
  | not (t : Reg) (x : Opd)
  | and (t : Reg) (x y : Opd)
  | or (t : Reg) (x y : Opd)
  | xor (t : Reg) (x y : Opd)

/-- A program: its statements, first to last. -/
inductive Prog where
  | nil
  | cons (s : Stmt) (rest : Prog)

/-- The values of `v0` … `v7`. -/
inductive State where
  | mk (a0 a1 a2 a3 a4 a5 a6 a7 : Bit)

/-- The value of operand `o` in the state `a0 … a7`. -/
noncomputable def read (a0 a1 a2 a3 a4 a5 a6 a7 : Bit) (o : Opd) : Bit :=
  Opd.rec (motive := fun _ => Bit) a0 a1 a2 a3 a4 a5 a6 a7
    Bit.b0 Bit.b1 o

/-- The state `a0 … a7` with variable `t` set to `x`. -/
noncomputable def write (t : Reg) (x a0 a1 a2 a3 a4 a5 a6 a7 : Bit) : State :=
  Reg.rec (motive := fun _ => State)
    (State.mk x a1 a2 a3 a4 a5 a6 a7)
    (State.mk a0 x a2 a3 a4 a5 a6 a7)
    (State.mk a0 a1 x a3 a4 a5 a6 a7)
    (State.mk a0 a1 a2 x a4 a5 a6 a7)
    (State.mk a0 a1 a2 a3 x a5 a6 a7)
    (State.mk a0 a1 a2 a3 a4 x a6 a7)
    (State.mk a0 a1 a2 a3 a4 a5 x a7)
    (State.mk a0 a1 a2 a3 a4 a5 a6 x)
    t

/-- The variable a statement assigns. -/
noncomputable def target (s : Stmt) : Reg :=
  Stmt.rec (motive := fun _ => Reg) (fun t _ => t) (fun t _ => t) (fun t _ _ => t) (fun t _ _ => t) (fun t _ _ => t) s

/-- The value statement `s` assigns in the state `a0 … a7`. -/
noncomputable def val (s : Stmt) (a0 a1 a2 a3 a4 a5 a6 a7 : Bit) : Bit :=
  Stmt.rec (motive := fun _ => Bit)
    (fun _ x => read a0 a1 a2 a3 a4 a5 a6 a7 x)
    (fun _ x => Bit.not (read a0 a1 a2 a3 a4 a5 a6 a7 x))
    (fun _ x y => Bit.and (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    (fun _ x y => Bit.or (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    (fun _ x y => Bit.xor (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    s

/-- The value statement `s` assigns in state `st`. -/
noncomputable def value (s : Stmt) (st : State) : Bit :=
  State.rec (motive := fun _ => Bit) (fun a0 a1 a2 a3 a4 a5 a6 a7 => val s a0 a1 a2 a3 a4 a5 a6 a7) st

/-- `st` with the variable statement `s` assigns set to `x`. -/
noncomputable def after (s : Stmt) (x : Bit) (st : State) : State :=
  State.rec (motive := fun _ => State) (fun a0 a1 a2 a3 a4 a5 a6 a7 => write (target s) x a0 a1 a2 a3 a4 a5 a6 a7) st

/-- The state after statement `s` from state `st`. -/
noncomputable def exec (s : Stmt) (st : State) : State := after s (value s st) st

/-- `k x`, once `x` is a constructor: the value is evaluated before `k` goes on. -/
noncomputable def force (x : Bit) (k : Bit → State) : State :=
  Bit.rec (motive := fun _ => State)
    (k Bit.b0) (k Bit.b1) x

theorem force_eq (x : Bit) (k : Bit → State) : Eq (force x k) (k x) :=
  Bit.rec (motive := fun x => Eq (force x k) (k x)) rfl rfl x

/-- The state after program `p` from state `st`; each statement's value is evaluated before the
next statement runs. `run_nil` and `run_cons` say that this is running the statements in turn. -/
noncomputable def run (p : Prog) (st : State) : State :=
  Prog.rec (motive := fun _ => State → State) (fun st => st)
    (fun s _ ih st => State.rec (motive := fun _ => State)
      (fun a0 a1 a2 a3 a4 a5 a6 a7 => force (val s a0 a1 a2 a3 a4 a5 a6 a7) (fun x => ih (write (target s) x a0 a1 a2 a3 a4 a5 a6 a7))) st) p st

theorem run_nil (st : State) : Eq (run Prog.nil st) st := rfl

theorem run_cons (s : Stmt) (p : Prog) (st : State) : Eq (run (Prog.cons s p) st) (run p (exec s st)) :=
  State.rec (motive := fun st => Eq (run (Prog.cons s p) st) (run p (exec s st)))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => force_eq (val s a0 a1 a2 a3 a4 a5 a6 a7) (fun x => run p (write (target s) x a0 a1 a2 a3 a4 a5 a6 a7))) st

/-- `s = t`, decided. -/
noncomputable def eqState (s t : State) : Bool :=
  State.rec (motive := fun _ => Bool) (fun a0 a1 a2 a3 a4 a5 a6 a7 =>
    State.rec (motive := fun _ => Bool) (fun y0 y1 y2 y3 y4 y5 y6 y7 =>
      Bool.and (Bit.eq a0 y0) (Bool.and (Bit.eq a1 y1) (Bool.and (Bit.eq a2 y2) (Bool.and (Bit.eq a3 y3) (Bool.and (Bit.eq a4 y4) (Bool.and (Bit.eq a5 y5) (Bool.and (Bit.eq a6 y6) (Bit.eq a7 y7)))))))) t) s

theorem State.congr {a0 a1 a2 a3 a4 a5 a6 a7 y0 y1 y2 y3 y4 y5 y6 y7 : Bit}
    (e0 : Eq a0 y0) (e1 : Eq a1 y1) (e2 : Eq a2 y2) (e3 : Eq a3 y3) (e4 : Eq a4 y4) (e5 : Eq a5 y5) (e6 : Eq a6 y6) (e7 : Eq a7 y7) :
    Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk y0 y1 y2 y3 y4 y5 y6 y7) :=
  Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk z y1 y2 y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 z y2 y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 z y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 z y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 z y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 z y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 a5 z y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 a5 a6 z))
    (rfl) e7) e6) e5) e4) e3) e2) e1) e0

theorem eqState_sound : ∀ (s t : State), Eq (eqState s t) Bool.true → Eq s t :=
  fun s => State.rec (motive := fun s => ∀ (t : State), Eq (eqState s t) Bool.true → Eq s t) (fun a0 a1 a2 a3 a4 a5 a6 a7 t =>
    State.rec (motive := fun t => Eq (eqState (State.mk a0 a1 a2 a3 a4 a5 a6 a7) t) Bool.true → Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) t)
      (fun y0 y1 y2 y3 y4 y5 y6 y7 h => State.congr
        (Bit.eq_sound a0 y0 (Bool.and_left h))
        (Bit.eq_sound a1 y1 (Bool.and_left (Bool.and_right h)))
        (Bit.eq_sound a2 y2 (Bool.and_left (Bool.and_right (Bool.and_right h))))
        (Bit.eq_sound a3 y3 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right h)))))
        (Bit.eq_sound a4 y4 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))
        (Bit.eq_sound a5 y5 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))
        (Bit.eq_sound a6 y6 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))
        (Bit.eq_sound a7 y7 (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))) t) s

/-! ### Runs of statements with the claimed state after each -/

/-- Statements, each with the state claimed after it. -/
inductive Trace where
  | nil
  | cons (s : Stmt) (post : State) (rest : Trace)

/-- Every step of `t` from `st`: each statement, run from the state claimed before it (`st` for
the first), gives the state claimed after it. -/
noncomputable def Steps (st : State) (t : Trace) : Prop :=
  Trace.rec (motive := fun _ => State → Prop) (fun _ => True)
    (fun s post _ ih st => And (Eq (exec s st) post) (ih post)) t st

/-- `Steps st t`, decided. -/
noncomputable def check (st : State) (t : Trace) : Bool :=
  Trace.rec (motive := fun _ => State → Bool) (fun _ => Bool.true)
    (fun s post _ ih st => Bool.and (eqState (exec s st) post) (ih post)) t st

theorem check_sound : ∀ (st : State) (t : Trace), Eq (check st t) Bool.true → Steps st t :=
  fun st t => Trace.rec (motive := fun t => ∀ (st : State), Eq (check st t) Bool.true → Steps st t)
    (fun _ _ => True.intro)
    (fun s post _ ih st h =>
      And.intro (eqState_sound (exec s st) post (Bool.and_left h)) (ih post (Bool.and_right h)))
    t st

/-- Statements, each with the value claimed for the variable it assigns: the claimed state after
a statement is the claimed state before it with that one variable set. -/
inductive Writes where
  | nil
  | cons (s : Stmt) (x : Bit) (rest : Writes)

/-- Every step of `ws` from `st`: each statement, run from the state claimed before it (`st` for
the first), gives that state with the statement's variable set to the claimed value. -/
noncomputable def Effects (st : State) (ws : Writes) : Prop :=
  Writes.rec (motive := fun _ => State → Prop) (fun _ => True)
    (fun s x _ ih st => And (Eq (exec s st) (after s x st)) (ih (after s x st))) ws st

/-- `Effects st ws`, decided. -/
noncomputable def checkWrites (st : State) (ws : Writes) : Bool :=
  Writes.rec (motive := fun _ => State → Bool) (fun _ => Bool.true)
    (fun s x _ ih st => Bool.and (Bit.eq (value s st) x) (ih (after s x st))) ws st

theorem checkWrites_sound : ∀ (st : State) (ws : Writes), Eq (checkWrites st ws) Bool.true → Effects st ws :=
  fun st ws => Writes.rec (motive := fun ws => ∀ (st : State), Eq (checkWrites st ws) Bool.true → Effects st ws)
    (fun _ _ => True.intro)
    (fun s x _ ih st h =>
      And.intro (congrArg (fun v => after s v st) (Bit.eq_sound (value s st) x (Bool.and_left h)))
        (ih (after s x st) (Bool.and_right h)))
    ws st

/-! ### Every start state -/

/-- `f` at each of the 256 states. -/
noncomputable def allStates (f : State → Bool) : Bool :=
  Bit.all (fun a0 => Bit.all (fun a1 => Bit.all (fun a2 => Bit.all (fun a3 =>
  Bit.all (fun a4 => Bit.all (fun a5 => Bit.all (fun a6 => Bit.all (fun a7 =>
    f (State.mk a0 a1 a2 a3 a4 a5 a6 a7)))))))))

theorem allStates_sound {f : State → Bool} (h : Eq (allStates f) Bool.true) : ∀ (st : State), Eq (f st) Bool.true :=
  fun st => State.rec (motive := fun st => Eq (f st) Bool.true) (fun a0 a1 a2 a3 a4 a5 a6 a7 =>
    Bit.all_sound (Bit.all_sound (Bit.all_sound (Bit.all_sound
      (Bit.all_sound (Bit.all_sound (Bit.all_sound (Bit.all_sound h a0) a1) a2) a3) a4) a5) a6) a7) st

/-! ### Every start state at once: truth tables

A `Table` holds one bit for each of the 256 states: the bit of state `a0 … a7` is bit `2·a6 + a7`
of nibble `idx a0 … a5` (`look`). Running a program on the eight tables of the start state's
variables (`vinit`) runs it from every state at once (`lookState_run`), and equal final tables
mean equal final states from every start (`equivAll_sound`). -/

/-- The 64 nibbles of a table. -/
inductive I64 where
  | i0 | i1 | i2 | i3 | i4 | i5 | i6 | i7 | i8 | i9 | i10 | i11 | i12 | i13 | i14 | i15
  | i16 | i17 | i18 | i19 | i20 | i21 | i22 | i23 | i24 | i25 | i26 | i27 | i28 | i29 | i30 | i31
  | i32 | i33 | i34 | i35 | i36 | i37 | i38 | i39 | i40 | i41 | i42 | i43 | i44 | i45 | i46 | i47
  | i48 | i49 | i50 | i51 | i52 | i53 | i54 | i55 | i56 | i57 | i58 | i59 | i60 | i61 | i62 | i63

inductive Table where
  | mk (x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 : Hex)

/-- Nibble `i` of a table. -/
noncomputable def Table.get (i : I64) (x : Table) : Hex :=
  Table.rec (motive := fun _ => Hex) (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 => I64.rec (motive := fun _ => Hex) x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 i) x

noncomputable def Table.map (f : Hex → Hex) (x : Table) : Table :=
  Table.rec (motive := fun _ => Table) (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 =>
    Table.mk (f x0) (f x1) (f x2) (f x3) (f x4) (f x5) (f x6) (f x7) (f x8) (f x9) (f x10) (f x11) (f x12) (f x13) (f x14) (f x15) (f x16) (f x17) (f x18) (f x19) (f x20) (f x21) (f x22) (f x23) (f x24) (f x25) (f x26) (f x27) (f x28) (f x29) (f x30) (f x31) (f x32) (f x33) (f x34) (f x35) (f x36) (f x37) (f x38) (f x39) (f x40) (f x41) (f x42) (f x43) (f x44) (f x45) (f x46) (f x47) (f x48) (f x49) (f x50) (f x51) (f x52) (f x53) (f x54) (f x55) (f x56) (f x57) (f x58) (f x59) (f x60) (f x61) (f x62) (f x63)) x

noncomputable def Table.map2 (f : Hex → Hex → Hex) (x y : Table) : Table :=
  Table.rec (motive := fun _ => Table) (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 =>
    Table.rec (motive := fun _ => Table) (fun y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63 =>
      Table.mk (f x0 y0) (f x1 y1) (f x2 y2) (f x3 y3) (f x4 y4) (f x5 y5) (f x6 y6) (f x7 y7) (f x8 y8) (f x9 y9) (f x10 y10) (f x11 y11) (f x12 y12) (f x13 y13) (f x14 y14) (f x15 y15) (f x16 y16) (f x17 y17) (f x18 y18) (f x19 y19) (f x20 y20) (f x21 y21) (f x22 y22) (f x23 y23) (f x24 y24) (f x25 y25) (f x26 y26) (f x27 y27) (f x28 y28) (f x29 y29) (f x30 y30) (f x31 y31) (f x32 y32) (f x33 y33) (f x34 y34) (f x35 y35) (f x36 y36) (f x37 y37) (f x38 y38) (f x39 y39) (f x40 y40) (f x41 y41) (f x42 y42) (f x43 y43) (f x44 y44) (f x45 y45) (f x46 y46) (f x47 y47) (f x48 y48) (f x49 y49) (f x50 y50) (f x51 y51) (f x52 y52) (f x53 y53) (f x54 y54) (f x55 y55) (f x56 y56) (f x57 y57) (f x58 y58) (f x59 y59) (f x60 y60) (f x61 y61) (f x62 y62) (f x63 y63)) y) x

noncomputable def Table.fill (h : Hex) : Table :=
  Table.mk h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h h

theorem Table.get_map (f : Hex → Hex) (x : Table) (i : I64) : Eq (Table.get i (Table.map f x)) (f (Table.get i x)) :=
  Table.rec (motive := fun x => Eq (Table.get i (Table.map f x)) (f (Table.get i x)))
    (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 => I64.rec (motive := fun i => Eq (Table.get i (Table.map f (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)))
      (f (Table.get i (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)))) rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl i) x

theorem Table.get_map2 (f : Hex → Hex → Hex) (x y : Table) (i : I64) :
    Eq (Table.get i (Table.map2 f x y)) (f (Table.get i x) (Table.get i y)) :=
  Table.rec (motive := fun x => Eq (Table.get i (Table.map2 f x y)) (f (Table.get i x) (Table.get i y)))
    (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 => Table.rec (motive := fun y => Eq (Table.get i (Table.map2 f (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63) y))
      (f (Table.get i (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)) (Table.get i y)))
      (fun y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63 => I64.rec (motive := fun i => Eq (Table.get i (Table.map2 f (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63) (Table.mk y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63)))
        (f (Table.get i (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)) (Table.get i (Table.mk y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63)))) rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl i) y) x

theorem Table.get_fill (h : Hex) (i : I64) : Eq (Table.get i (Table.fill h)) h :=
  I64.rec (motive := fun i => Eq (Table.get i (Table.fill h)) h) rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl i

/-- Bit `2·a6 + a7` of a nibble. -/
noncomputable def nibBit (a6 a7 : Bit) (h : Hex) : Bit :=
  Hex.rec (motive := fun _ => Bit)
    Bit.b0
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b0 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) a6)
    (Bit.rec (motive := fun _ => Bit) (Bit.rec (motive := fun _ => Bit) Bit.b0 Bit.b1 a7) (Bit.rec (motive := fun _ => Bit) Bit.b1 Bit.b1 a7) a6)
    Bit.b1
    h

/-- `and`, bit by bit. -/
noncomputable def nibAnd (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h0 Hex.h0 Hex.h2 Hex.h2)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h2 Hex.h3)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h4 Hex.h4 Hex.h4 Hex.h4 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h4 Hex.h4 Hex.h4 Hex.h4)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h4 Hex.h5 Hex.h4 Hex.h5 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h4 Hex.h5 Hex.h4 Hex.h5)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h4 Hex.h4 Hex.h6 Hex.h6 Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h4 Hex.h4 Hex.h6 Hex.h6)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h8 Hex.h8 Hex.h8 Hex.h8 Hex.h8 Hex.h8 Hex.h8 Hex.h8)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h8 Hex.h9 Hex.h8 Hex.h9 Hex.h8 Hex.h9 Hex.h8 Hex.h9)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h8 Hex.h8 Hex.h10 Hex.h10 Hex.h8 Hex.h8 Hex.h10 Hex.h10)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h8 Hex.h9 Hex.h10 Hex.h11)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h4 Hex.h4 Hex.h4 Hex.h4 Hex.h8 Hex.h8 Hex.h8 Hex.h8 Hex.h12 Hex.h12 Hex.h12 Hex.h12)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h0 Hex.h1 Hex.h4 Hex.h5 Hex.h4 Hex.h5 Hex.h8 Hex.h9 Hex.h8 Hex.h9 Hex.h12 Hex.h13 Hex.h12 Hex.h13)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h0 Hex.h2 Hex.h2 Hex.h4 Hex.h4 Hex.h6 Hex.h6 Hex.h8 Hex.h8 Hex.h10 Hex.h10 Hex.h12 Hex.h12 Hex.h14 Hex.h14)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    a b

/-- `or`, bit by bit. -/
noncomputable def nibOr (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h1 Hex.h1 Hex.h3 Hex.h3 Hex.h5 Hex.h5 Hex.h7 Hex.h7 Hex.h9 Hex.h9 Hex.h11 Hex.h11 Hex.h13 Hex.h13 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h2 Hex.h3 Hex.h2 Hex.h3 Hex.h6 Hex.h7 Hex.h6 Hex.h7 Hex.h10 Hex.h11 Hex.h10 Hex.h11 Hex.h14 Hex.h15 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h3 Hex.h3 Hex.h3 Hex.h3 Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h11 Hex.h11 Hex.h11 Hex.h11 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h5 Hex.h5 Hex.h7 Hex.h7 Hex.h5 Hex.h5 Hex.h7 Hex.h7 Hex.h13 Hex.h13 Hex.h15 Hex.h15 Hex.h13 Hex.h13 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h6 Hex.h7 Hex.h6 Hex.h7 Hex.h6 Hex.h7 Hex.h6 Hex.h7 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h7 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h9 Hex.h9 Hex.h11 Hex.h11 Hex.h13 Hex.h13 Hex.h15 Hex.h15 Hex.h9 Hex.h9 Hex.h11 Hex.h11 Hex.h13 Hex.h13 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h10 Hex.h11 Hex.h10 Hex.h11 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h10 Hex.h11 Hex.h10 Hex.h11 Hex.h14 Hex.h15 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h11 Hex.h11 Hex.h11 Hex.h11 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h11 Hex.h11 Hex.h11 Hex.h11 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h13 Hex.h13 Hex.h15 Hex.h15 Hex.h13 Hex.h13 Hex.h15 Hex.h15 Hex.h13 Hex.h13 Hex.h15 Hex.h15 Hex.h13 Hex.h13 Hex.h15 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    a b

/-- `xor`, bit by bit. -/
noncomputable def nibXor (a b : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex → Hex)
    (Hex.rec (motive := fun _ => Hex) Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15)
    (Hex.rec (motive := fun _ => Hex) Hex.h1 Hex.h0 Hex.h3 Hex.h2 Hex.h5 Hex.h4 Hex.h7 Hex.h6 Hex.h9 Hex.h8 Hex.h11 Hex.h10 Hex.h13 Hex.h12 Hex.h15 Hex.h14)
    (Hex.rec (motive := fun _ => Hex) Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h6 Hex.h7 Hex.h4 Hex.h5 Hex.h10 Hex.h11 Hex.h8 Hex.h9 Hex.h14 Hex.h15 Hex.h12 Hex.h13)
    (Hex.rec (motive := fun _ => Hex) Hex.h3 Hex.h2 Hex.h1 Hex.h0 Hex.h7 Hex.h6 Hex.h5 Hex.h4 Hex.h11 Hex.h10 Hex.h9 Hex.h8 Hex.h15 Hex.h14 Hex.h13 Hex.h12)
    (Hex.rec (motive := fun _ => Hex) Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h8 Hex.h9 Hex.h10 Hex.h11)
    (Hex.rec (motive := fun _ => Hex) Hex.h5 Hex.h4 Hex.h7 Hex.h6 Hex.h1 Hex.h0 Hex.h3 Hex.h2 Hex.h13 Hex.h12 Hex.h15 Hex.h14 Hex.h9 Hex.h8 Hex.h11 Hex.h10)
    (Hex.rec (motive := fun _ => Hex) Hex.h6 Hex.h7 Hex.h4 Hex.h5 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h10 Hex.h11 Hex.h8 Hex.h9)
    (Hex.rec (motive := fun _ => Hex) Hex.h7 Hex.h6 Hex.h5 Hex.h4 Hex.h3 Hex.h2 Hex.h1 Hex.h0 Hex.h15 Hex.h14 Hex.h13 Hex.h12 Hex.h11 Hex.h10 Hex.h9 Hex.h8)
    (Hex.rec (motive := fun _ => Hex) Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7)
    (Hex.rec (motive := fun _ => Hex) Hex.h9 Hex.h8 Hex.h11 Hex.h10 Hex.h13 Hex.h12 Hex.h15 Hex.h14 Hex.h1 Hex.h0 Hex.h3 Hex.h2 Hex.h5 Hex.h4 Hex.h7 Hex.h6)
    (Hex.rec (motive := fun _ => Hex) Hex.h10 Hex.h11 Hex.h8 Hex.h9 Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h2 Hex.h3 Hex.h0 Hex.h1 Hex.h6 Hex.h7 Hex.h4 Hex.h5)
    (Hex.rec (motive := fun _ => Hex) Hex.h11 Hex.h10 Hex.h9 Hex.h8 Hex.h15 Hex.h14 Hex.h13 Hex.h12 Hex.h3 Hex.h2 Hex.h1 Hex.h0 Hex.h7 Hex.h6 Hex.h5 Hex.h4)
    (Hex.rec (motive := fun _ => Hex) Hex.h12 Hex.h13 Hex.h14 Hex.h15 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h0 Hex.h1 Hex.h2 Hex.h3)
    (Hex.rec (motive := fun _ => Hex) Hex.h13 Hex.h12 Hex.h15 Hex.h14 Hex.h9 Hex.h8 Hex.h11 Hex.h10 Hex.h5 Hex.h4 Hex.h7 Hex.h6 Hex.h1 Hex.h0 Hex.h3 Hex.h2)
    (Hex.rec (motive := fun _ => Hex) Hex.h14 Hex.h15 Hex.h12 Hex.h13 Hex.h10 Hex.h11 Hex.h8 Hex.h9 Hex.h6 Hex.h7 Hex.h4 Hex.h5 Hex.h2 Hex.h3 Hex.h0 Hex.h1)
    (Hex.rec (motive := fun _ => Hex) Hex.h15 Hex.h14 Hex.h13 Hex.h12 Hex.h11 Hex.h10 Hex.h9 Hex.h8 Hex.h7 Hex.h6 Hex.h5 Hex.h4 Hex.h3 Hex.h2 Hex.h1 Hex.h0)
    a b

/-- `not`, bit by bit. -/
noncomputable def nibNot (a : Hex) : Hex :=
  Hex.rec (motive := fun _ => Hex) Hex.h15 Hex.h14 Hex.h13 Hex.h12 Hex.h11 Hex.h10 Hex.h9 Hex.h8 Hex.h7 Hex.h6 Hex.h5 Hex.h4 Hex.h3 Hex.h2 Hex.h1 Hex.h0 a

theorem nibBit_and : ∀ (a6 a7 : Bit) (u v : Hex),
    Eq (nibBit a6 a7 (nibAnd u v)) (Bit.and (nibBit a6 a7 u) (nibBit a6 a7 v)) :=
  fun a6 a7 u v => Bit.eq_sound _ _ (Hex.all_sound (Hex.all_sound (Bit.all_sound (Bit.all_sound
    (rfl : Eq (Bit.all (fun a6 => Bit.all (fun a7 => Hex.all (fun u => Hex.all (fun v =>
    Bit.eq (nibBit a6 a7 (nibAnd u v)) (Bit.and (nibBit a6 a7 u) (nibBit a6 a7 v))))))) Bool.true) a6) a7) u) v)

theorem nibBit_or : ∀ (a6 a7 : Bit) (u v : Hex),
    Eq (nibBit a6 a7 (nibOr u v)) (Bit.or (nibBit a6 a7 u) (nibBit a6 a7 v)) :=
  fun a6 a7 u v => Bit.eq_sound _ _ (Hex.all_sound (Hex.all_sound (Bit.all_sound (Bit.all_sound
    (rfl : Eq (Bit.all (fun a6 => Bit.all (fun a7 => Hex.all (fun u => Hex.all (fun v =>
    Bit.eq (nibBit a6 a7 (nibOr u v)) (Bit.or (nibBit a6 a7 u) (nibBit a6 a7 v))))))) Bool.true) a6) a7) u) v)

theorem nibBit_xor : ∀ (a6 a7 : Bit) (u v : Hex),
    Eq (nibBit a6 a7 (nibXor u v)) (Bit.xor (nibBit a6 a7 u) (nibBit a6 a7 v)) :=
  fun a6 a7 u v => Bit.eq_sound _ _ (Hex.all_sound (Hex.all_sound (Bit.all_sound (Bit.all_sound
    (rfl : Eq (Bit.all (fun a6 => Bit.all (fun a7 => Hex.all (fun u => Hex.all (fun v =>
    Bit.eq (nibBit a6 a7 (nibXor u v)) (Bit.xor (nibBit a6 a7 u) (nibBit a6 a7 v))))))) Bool.true) a6) a7) u) v)

theorem nibBit_not : ∀ (a6 a7 : Bit) (u : Hex), Eq (nibBit a6 a7 (nibNot u)) (Bit.not (nibBit a6 a7 u)) :=
  fun a6 a7 u => Bit.eq_sound _ _ (Hex.all_sound (Bit.all_sound (Bit.all_sound
    (rfl : Eq (Bit.all (fun a6 => Bit.all (fun a7 => Hex.all (fun u =>
      Bit.eq (nibBit a6 a7 (nibNot u)) (Bit.not (nibBit a6 a7 u)))))) Bool.true) a6) a7) u)

noncomputable def sel (a : Bit) (i j : I64) : I64 := Bit.rec (motive := fun _ => I64) i j a

/-- The nibble of the states that begin `a0 … a5`. -/
noncomputable def idx (a0 a1 a2 a3 a4 a5 : Bit) : I64 :=
  (sel a0
    (sel a1
      (sel a2
        (sel a3
          (sel a4
            (sel a5 I64.i0 I64.i1)
            (sel a5 I64.i2 I64.i3))
          (sel a4
            (sel a5 I64.i4 I64.i5)
            (sel a5 I64.i6 I64.i7)))
        (sel a3
          (sel a4
            (sel a5 I64.i8 I64.i9)
            (sel a5 I64.i10 I64.i11))
          (sel a4
            (sel a5 I64.i12 I64.i13)
            (sel a5 I64.i14 I64.i15))))
      (sel a2
        (sel a3
          (sel a4
            (sel a5 I64.i16 I64.i17)
            (sel a5 I64.i18 I64.i19))
          (sel a4
            (sel a5 I64.i20 I64.i21)
            (sel a5 I64.i22 I64.i23)))
        (sel a3
          (sel a4
            (sel a5 I64.i24 I64.i25)
            (sel a5 I64.i26 I64.i27))
          (sel a4
            (sel a5 I64.i28 I64.i29)
            (sel a5 I64.i30 I64.i31)))))
    (sel a1
      (sel a2
        (sel a3
          (sel a4
            (sel a5 I64.i32 I64.i33)
            (sel a5 I64.i34 I64.i35))
          (sel a4
            (sel a5 I64.i36 I64.i37)
            (sel a5 I64.i38 I64.i39)))
        (sel a3
          (sel a4
            (sel a5 I64.i40 I64.i41)
            (sel a5 I64.i42 I64.i43))
          (sel a4
            (sel a5 I64.i44 I64.i45)
            (sel a5 I64.i46 I64.i47))))
      (sel a2
        (sel a3
          (sel a4
            (sel a5 I64.i48 I64.i49)
            (sel a5 I64.i50 I64.i51))
          (sel a4
            (sel a5 I64.i52 I64.i53)
            (sel a5 I64.i54 I64.i55)))
        (sel a3
          (sel a4
            (sel a5 I64.i56 I64.i57)
            (sel a5 I64.i58 I64.i59))
          (sel a4
            (sel a5 I64.i60 I64.i61)
            (sel a5 I64.i62 I64.i63))))))

/-- The bit of state `st` in a table. -/
noncomputable def look (st : State) (x : Table) : Bit :=
  State.rec (motive := fun _ => Bit) (fun a0 a1 a2 a3 a4 a5 a6 a7 => nibBit a6 a7 (Table.get (idx a0 a1 a2 a3 a4 a5) x)) st

theorem look_map (f : Hex → Hex) (g : Bit → Bit) (hf : ∀ (a6 a7 : Bit) (u : Hex), Eq (nibBit a6 a7 (f u)) (g (nibBit a6 a7 u)))
    (st : State) (x : Table) : Eq (look st (Table.map f x)) (g (look st x)) :=
  State.rec (motive := fun st => Eq (look st (Table.map f x)) (g (look st x)))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => Eq.trans (congrArg (nibBit a6 a7) (Table.get_map f x (idx a0 a1 a2 a3 a4 a5))) (hf a6 a7 _)) st

theorem look_map2 (f : Hex → Hex → Hex) (g : Bit → Bit → Bit)
    (hf : ∀ (a6 a7 : Bit) (u v : Hex), Eq (nibBit a6 a7 (f u v)) (g (nibBit a6 a7 u) (nibBit a6 a7 v)))
    (st : State) (x y : Table) : Eq (look st (Table.map2 f x y)) (g (look st x) (look st y)) :=
  State.rec (motive := fun st => Eq (look st (Table.map2 f x y)) (g (look st x) (look st y)))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => Eq.trans (congrArg (nibBit a6 a7) (Table.get_map2 f x y (idx a0 a1 a2 a3 a4 a5))) (hf a6 a7 _ _)) st

theorem look_fill (h : Hex) (st : State) : Eq (look st (Table.fill h)) (State.rec (motive := fun _ => Bit)
    (fun _ _ _ _ _ _ a6 a7 => nibBit a6 a7 h) st) :=
  State.rec (motive := fun st => Eq (look st (Table.fill h)) (State.rec (motive := fun _ => Bit)
    (fun _ _ _ _ _ _ a6 a7 => nibBit a6 a7 h) st))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => congrArg (nibBit a6 a7) (Table.get_fill h (idx a0 a1 a2 a3 a4 a5))) st

/-- Eight tables, `v0` first. -/
inductive VState where
  | mk (t0 t1 t2 t3 t4 t5 t6 t7 : Table)

noncomputable def lookState (st : State) (vs : VState) : State :=
  VState.rec (motive := fun _ => State) (fun t0 t1 t2 t3 t4 t5 t6 t7 => State.mk (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)) vs

noncomputable def vread (t0 t1 t2 t3 t4 t5 t6 t7 : Table) (o : Opd) : Table :=
  Opd.rec (motive := fun _ => Table) t0 t1 t2 t3 t4 t5 t6 t7 (Table.fill Hex.h0) (Table.fill Hex.h15) o

noncomputable def vval (s : Stmt) (t0 t1 t2 t3 t4 t5 t6 t7 : Table) : Table :=
  Stmt.rec (motive := fun _ => Table)
    (fun _ x => vread t0 t1 t2 t3 t4 t5 t6 t7 x)
    (fun _ x => Table.map nibNot (vread t0 t1 t2 t3 t4 t5 t6 t7 x))
    (fun _ x y => Table.map2 nibAnd (vread t0 t1 t2 t3 t4 t5 t6 t7 x) (vread t0 t1 t2 t3 t4 t5 t6 t7 y))
    (fun _ x y => Table.map2 nibOr (vread t0 t1 t2 t3 t4 t5 t6 t7 x) (vread t0 t1 t2 t3 t4 t5 t6 t7 y))
    (fun _ x y => Table.map2 nibXor (vread t0 t1 t2 t3 t4 t5 t6 t7 x) (vread t0 t1 t2 t3 t4 t5 t6 t7 y))
    s

noncomputable def vwrite (t : Reg) (x t0 t1 t2 t3 t4 t5 t6 t7 : Table) : VState :=
  Reg.rec (motive := fun _ => VState)
    (VState.mk x t1 t2 t3 t4 t5 t6 t7)
    (VState.mk t0 x t2 t3 t4 t5 t6 t7)
    (VState.mk t0 t1 x t3 t4 t5 t6 t7)
    (VState.mk t0 t1 t2 x t4 t5 t6 t7)
    (VState.mk t0 t1 t2 t3 x t5 t6 t7)
    (VState.mk t0 t1 t2 t3 t4 x t6 t7)
    (VState.mk t0 t1 t2 t3 t4 t5 x t7)
    (VState.mk t0 t1 t2 t3 t4 t5 t6 x)
    t

noncomputable def vexec (s : Stmt) (vs : VState) : VState :=
  VState.rec (motive := fun _ => VState) (fun t0 t1 t2 t3 t4 t5 t6 t7 => vwrite (target s) (vval s t0 t1 t2 t3 t4 t5 t6 t7) t0 t1 t2 t3 t4 t5 t6 t7) vs

noncomputable def vrun (p : Prog) (vs : VState) : VState :=
  Prog.rec (motive := fun _ => VState → VState) (fun vs => vs) (fun s _ ih vs => ih (vexec s vs)) p vs

theorem look_read (st : State) (t0 t1 t2 t3 t4 t5 t6 t7 : Table) (o : Opd) :
    Eq (look st (vread t0 t1 t2 t3 t4 t5 t6 t7 o)) (read (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7) o) :=
  Opd.rec (motive := fun o => Eq (look st (vread t0 t1 t2 t3 t4 t5 t6 t7 o)) (read (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7) o))
    rfl rfl rfl rfl rfl rfl rfl rfl (look_fill Hex.h0 st) (look_fill Hex.h15 st) o

theorem look_val (st : State) (s : Stmt) (t0 t1 t2 t3 t4 t5 t6 t7 : Table) :
    Eq (look st (vval s t0 t1 t2 t3 t4 t5 t6 t7)) (val s (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)) :=
  Stmt.rec (motive := fun s => Eq (look st (vval s t0 t1 t2 t3 t4 t5 t6 t7)) (val s (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)))
    (fun _ x => look_read st t0 t1 t2 t3 t4 t5 t6 t7 x)
    (fun _ x => Eq.trans (look_map nibNot Bit.not nibBit_not st _) (congrArg Bit.not (look_read st t0 t1 t2 t3 t4 t5 t6 t7 x)))
    (fun _ x y => Eq.trans (look_map2 nibAnd Bit.and nibBit_and st _ _)
      (congr2 Bit.and (look_read st t0 t1 t2 t3 t4 t5 t6 t7 x) (look_read st t0 t1 t2 t3 t4 t5 t6 t7 y)))
    (fun _ x y => Eq.trans (look_map2 nibOr Bit.or nibBit_or st _ _)
      (congr2 Bit.or (look_read st t0 t1 t2 t3 t4 t5 t6 t7 x) (look_read st t0 t1 t2 t3 t4 t5 t6 t7 y)))
    (fun _ x y => Eq.trans (look_map2 nibXor Bit.xor nibBit_xor st _ _)
      (congr2 Bit.xor (look_read st t0 t1 t2 t3 t4 t5 t6 t7 x) (look_read st t0 t1 t2 t3 t4 t5 t6 t7 y)))
    s

theorem lookState_write (st : State) (t : Reg) (x t0 t1 t2 t3 t4 t5 t6 t7 : Table) :
    Eq (lookState st (vwrite t x t0 t1 t2 t3 t4 t5 t6 t7)) (write t (look st x) (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)) :=
  Reg.rec (motive := fun t => Eq (lookState st (vwrite t x t0 t1 t2 t3 t4 t5 t6 t7)) (write t (look st x) (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)))
    rfl rfl rfl rfl rfl rfl rfl rfl t

theorem lookState_exec (st : State) (s : Stmt) (vs : VState) :
    Eq (lookState st (vexec s vs)) (exec s (lookState st vs)) :=
  VState.rec (motive := fun vs => Eq (lookState st (vexec s vs)) (exec s (lookState st vs)))
    (fun t0 t1 t2 t3 t4 t5 t6 t7 => Eq.trans (lookState_write st (target s) (vval s t0 t1 t2 t3 t4 t5 t6 t7) t0 t1 t2 t3 t4 t5 t6 t7)
      (congrArg (fun v => write (target s) v (look st t0) (look st t1) (look st t2) (look st t3) (look st t4) (look st t5) (look st t6) (look st t7)) (look_val st s t0 t1 t2 t3 t4 t5 t6 t7))) vs

theorem lookState_run (st : State) : ∀ (p : Prog) (vs : VState), Eq (lookState st (vrun p vs)) (run p (lookState st vs)) :=
  fun p => Prog.rec (motive := fun p => ∀ (vs : VState), Eq (lookState st (vrun p vs)) (run p (lookState st vs)))
    (fun _ => rfl)
    (fun s rest ih vs => Eq.trans (ih (vexec s vs))
      (Eq.trans (congrArg (run rest) (lookState_exec st s vs)) (Eq.symm (run_cons s rest (lookState st vs)))))
    p

/-- The tables of the variables themselves: `look st` of table `i` is `vi` of `st`. -/
noncomputable def vinit : VState :=
  VState.mk
    (Table.mk Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Table.mk Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Table.mk Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Table.mk Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h15 Hex.h15)
    (Table.mk Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15 Hex.h0 Hex.h0 Hex.h15 Hex.h15)
    (Table.mk Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15 Hex.h0 Hex.h15)
    (Table.mk Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12 Hex.h12)
    (Table.mk Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10 Hex.h10)

theorem lookState_init : ∀ (st : State), Eq (lookState st vinit) st :=
  fun st => eqState_sound _ _ (allStates_sound (f := fun st => eqState (lookState st vinit) st) rfl st)

/-- `x = y`, decided. -/
noncomputable def Table.eq (x y : Table) : Bool :=
  Table.rec (motive := fun _ => Bool) (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 =>
    Table.rec (motive := fun _ => Bool) (fun y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63 =>
      Bool.and (Hex.eq x0 y0) (Bool.and (Hex.eq x1 y1) (Bool.and (Hex.eq x2 y2) (Bool.and (Hex.eq x3 y3) (Bool.and (Hex.eq x4 y4) (Bool.and (Hex.eq x5 y5) (Bool.and (Hex.eq x6 y6) (Bool.and (Hex.eq x7 y7) (Bool.and (Hex.eq x8 y8) (Bool.and (Hex.eq x9 y9) (Bool.and (Hex.eq x10 y10) (Bool.and (Hex.eq x11 y11) (Bool.and (Hex.eq x12 y12) (Bool.and (Hex.eq x13 y13) (Bool.and (Hex.eq x14 y14) (Bool.and (Hex.eq x15 y15) (Bool.and (Hex.eq x16 y16) (Bool.and (Hex.eq x17 y17) (Bool.and (Hex.eq x18 y18) (Bool.and (Hex.eq x19 y19) (Bool.and (Hex.eq x20 y20) (Bool.and (Hex.eq x21 y21) (Bool.and (Hex.eq x22 y22) (Bool.and (Hex.eq x23 y23) (Bool.and (Hex.eq x24 y24) (Bool.and (Hex.eq x25 y25) (Bool.and (Hex.eq x26 y26) (Bool.and (Hex.eq x27 y27) (Bool.and (Hex.eq x28 y28) (Bool.and (Hex.eq x29 y29) (Bool.and (Hex.eq x30 y30) (Bool.and (Hex.eq x31 y31) (Bool.and (Hex.eq x32 y32) (Bool.and (Hex.eq x33 y33) (Bool.and (Hex.eq x34 y34) (Bool.and (Hex.eq x35 y35) (Bool.and (Hex.eq x36 y36) (Bool.and (Hex.eq x37 y37) (Bool.and (Hex.eq x38 y38) (Bool.and (Hex.eq x39 y39) (Bool.and (Hex.eq x40 y40) (Bool.and (Hex.eq x41 y41) (Bool.and (Hex.eq x42 y42) (Bool.and (Hex.eq x43 y43) (Bool.and (Hex.eq x44 y44) (Bool.and (Hex.eq x45 y45) (Bool.and (Hex.eq x46 y46) (Bool.and (Hex.eq x47 y47) (Bool.and (Hex.eq x48 y48) (Bool.and (Hex.eq x49 y49) (Bool.and (Hex.eq x50 y50) (Bool.and (Hex.eq x51 y51) (Bool.and (Hex.eq x52 y52) (Bool.and (Hex.eq x53 y53) (Bool.and (Hex.eq x54 y54) (Bool.and (Hex.eq x55 y55) (Bool.and (Hex.eq x56 y56) (Bool.and (Hex.eq x57 y57) (Bool.and (Hex.eq x58 y58) (Bool.and (Hex.eq x59 y59) (Bool.and (Hex.eq x60 y60) (Bool.and (Hex.eq x61 y61) (Bool.and (Hex.eq x62 y62) (Hex.eq x63 y63)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))) y) x

theorem Table.eq_get : ∀ (x y : Table), Eq (Table.eq x y) Bool.true → ∀ (i : I64), Eq (Table.get i x) (Table.get i y) :=
  fun x => Table.rec (motive := fun x => ∀ (y : Table), Eq (Table.eq x y) Bool.true → ∀ (i : I64), Eq (Table.get i x) (Table.get i y))
    (fun x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 y => Table.rec (motive := fun y => Eq (Table.eq (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63) y) Bool.true →
      ∀ (i : I64), Eq (Table.get i (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)) (Table.get i y))
      (fun y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63 h i => I64.rec (motive := fun i => Eq (Table.get i (Table.mk x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63)) (Table.get i (Table.mk y0 y1 y2 y3 y4 y5 y6 y7 y8 y9 y10 y11 y12 y13 y14 y15 y16 y17 y18 y19 y20 y21 y22 y23 y24 y25 y26 y27 y28 y29 y30 y31 y32 y33 y34 y35 y36 y37 y38 y39 y40 y41 y42 y43 y44 y45 y46 y47 y48 y49 y50 y51 y52 y53 y54 y55 y56 y57 y58 y59 y60 y61 y62 y63)))
        (Hex.eq_sound x0 y0 (Bool.and_left h))
        (Hex.eq_sound x1 y1 (Bool.and_left (Bool.and_right h)))
        (Hex.eq_sound x2 y2 (Bool.and_left (Bool.and_right (Bool.and_right h))))
        (Hex.eq_sound x3 y3 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right h)))))
        (Hex.eq_sound x4 y4 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))
        (Hex.eq_sound x5 y5 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))
        (Hex.eq_sound x6 y6 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))
        (Hex.eq_sound x7 y7 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))
        (Hex.eq_sound x8 y8 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))
        (Hex.eq_sound x9 y9 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))
        (Hex.eq_sound x10 y10 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))
        (Hex.eq_sound x11 y11 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))
        (Hex.eq_sound x12 y12 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))
        (Hex.eq_sound x13 y13 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))
        (Hex.eq_sound x14 y14 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))
        (Hex.eq_sound x15 y15 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))
        (Hex.eq_sound x16 y16 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))
        (Hex.eq_sound x17 y17 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))
        (Hex.eq_sound x18 y18 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))
        (Hex.eq_sound x19 y19 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))
        (Hex.eq_sound x20 y20 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))
        (Hex.eq_sound x21 y21 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))
        (Hex.eq_sound x22 y22 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))
        (Hex.eq_sound x23 y23 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))
        (Hex.eq_sound x24 y24 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))
        (Hex.eq_sound x25 y25 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))
        (Hex.eq_sound x26 y26 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))
        (Hex.eq_sound x27 y27 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))
        (Hex.eq_sound x28 y28 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))
        (Hex.eq_sound x29 y29 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))
        (Hex.eq_sound x30 y30 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))
        (Hex.eq_sound x31 y31 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))
        (Hex.eq_sound x32 y32 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x33 y33 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x34 y34 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x35 y35 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x36 y36 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x37 y37 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x38 y38 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x39 y39 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x40 y40 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x41 y41 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x42 y42 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x43 y43 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x44 y44 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x45 y45 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x46 y46 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x47 y47 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x48 y48 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x49 y49 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x50 y50 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x51 y51 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x52 y52 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x53 y53 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x54 y54 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x55 y55 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x56 y56 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x57 y57 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x58 y58 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x59 y59 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x60 y60 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x61 y61 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x62 y62 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        (Hex.eq_sound x63 y63 (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
        i) y) x

theorem look_eq {x y : Table} (h : Eq (Table.eq x y) Bool.true) (st : State) : Eq (look st x) (look st y) :=
  State.rec (motive := fun st => Eq (look st x) (look st y))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => congrArg (nibBit a6 a7) (Table.eq_get x y h (idx a0 a1 a2 a3 a4 a5))) st

/-- `vs = ws`, decided. -/
noncomputable def VState.eq (vs ws : VState) : Bool :=
  VState.rec (motive := fun _ => Bool) (fun t0 t1 t2 t3 t4 t5 t6 t7 =>
    VState.rec (motive := fun _ => Bool) (fun u0 u1 u2 u3 u4 u5 u6 u7 =>
      Bool.and (Table.eq t0 u0) (Bool.and (Table.eq t1 u1) (Bool.and (Table.eq t2 u2) (Bool.and (Table.eq t3 u3) (Bool.and (Table.eq t4 u4) (Bool.and (Table.eq t5 u5) (Bool.and (Table.eq t6 u6) (Table.eq t7 u7)))))))) ws) vs

theorem lookState_eq : ∀ (vs ws : VState), Eq (VState.eq vs ws) Bool.true → ∀ (st : State), Eq (lookState st vs) (lookState st ws) :=
  fun vs => VState.rec (motive := fun vs => ∀ (ws : VState), Eq (VState.eq vs ws) Bool.true →
    ∀ (st : State), Eq (lookState st vs) (lookState st ws))
    (fun t0 t1 t2 t3 t4 t5 t6 t7 ws => VState.rec (motive := fun ws => Eq (VState.eq (VState.mk t0 t1 t2 t3 t4 t5 t6 t7) ws) Bool.true →
      ∀ (st : State), Eq (lookState st (VState.mk t0 t1 t2 t3 t4 t5 t6 t7)) (lookState st ws))
      (fun _ _ _ _ _ _ _ _ h st => State.congr
        (look_eq (Bool.and_left h) st)
        (look_eq (Bool.and_left (Bool.and_right h)) st)
        (look_eq (Bool.and_left (Bool.and_right (Bool.and_right h))) st)
        (look_eq (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right h)))) st)
        (look_eq (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))) st)
        (look_eq (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))) st)
        (look_eq (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))) st)
        (look_eq (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))) st)) ws) vs

/-- Do `p` and `q` end in the same state from each of the 256 start states? (They are run once,
on truth tables.) -/
noncomputable def equivAll (p q : Prog) : Bool := VState.eq (vrun p vinit) (vrun q vinit)

theorem equivAll_sound {p q : Prog} (h : Eq (equivAll p q) Bool.true) : ∀ (st : State), Eq (run p st) (run q st) :=
  fun st => Eq.trans (congrArg (run p) (Eq.symm (lookState_init st)))
    (Eq.trans (Eq.symm (lookState_run st p vinit))
    (Eq.trans (lookState_eq _ _ h st)
    (Eq.trans (lookState_run st q vinit) (congrArg (run q) (lookState_init st)))))

end Bits

/-! ## The Arithmetic machine -/

namespace Arith

/-- An operand: a variable, or a constant. -/
inductive Opd where
  | v0 | v1 | v2 | v3 | v4 | v5 | v6 | v7
  | c0 | c1 | c2 | c3 | c4 | c5 | c6 | c7 | c8 | c9 | c10 | c11 | c12 | c13 | c14 | c15

/-- A statement: variable `t` gets `x`, `x + y`, `x - y`, `x * y` (modulo 16) or `if x < y then z else w`. -/
inductive Stmt where
  | set (t : Reg) (x : Opd)
  | add (t : Reg) (x y : Opd)
  | sub (t : Reg) (x y : Opd)
  | mul (t : Reg) (x y : Opd)
  | ite (t : Reg) (x y z w : Opd)

/-- A program: its statements, first to last. -/
inductive Prog where
  | nil
  | cons (s : Stmt) (rest : Prog)

/-- The values of `v0` … `v7`. -/
inductive State where
  | mk (a0 a1 a2 a3 a4 a5 a6 a7 : Hex)

/-- The value of operand `o` in the state `a0 … a7`. -/
noncomputable def read (a0 a1 a2 a3 a4 a5 a6 a7 : Hex) (o : Opd) : Hex :=
  Opd.rec (motive := fun _ => Hex) a0 a1 a2 a3 a4 a5 a6 a7
    Hex.h0 Hex.h1 Hex.h2 Hex.h3 Hex.h4 Hex.h5 Hex.h6 Hex.h7 Hex.h8 Hex.h9 Hex.h10 Hex.h11 Hex.h12 Hex.h13 Hex.h14 Hex.h15 o

/-- The state `a0 … a7` with variable `t` set to `x`. -/
noncomputable def write (t : Reg) (x a0 a1 a2 a3 a4 a5 a6 a7 : Hex) : State :=
  Reg.rec (motive := fun _ => State)
    (State.mk x a1 a2 a3 a4 a5 a6 a7)
    (State.mk a0 x a2 a3 a4 a5 a6 a7)
    (State.mk a0 a1 x a3 a4 a5 a6 a7)
    (State.mk a0 a1 a2 x a4 a5 a6 a7)
    (State.mk a0 a1 a2 a3 x a5 a6 a7)
    (State.mk a0 a1 a2 a3 a4 x a6 a7)
    (State.mk a0 a1 a2 a3 a4 a5 x a7)
    (State.mk a0 a1 a2 a3 a4 a5 a6 x)
    t

/-- The variable a statement assigns. -/
noncomputable def target (s : Stmt) : Reg :=
  Stmt.rec (motive := fun _ => Reg) (fun t _ => t) (fun t _ _ => t) (fun t _ _ => t) (fun t _ _ => t) (fun t _ _ _ _ => t) s

/-- The value statement `s` assigns in the state `a0 … a7`. -/
noncomputable def val (s : Stmt) (a0 a1 a2 a3 a4 a5 a6 a7 : Hex) : Hex :=
  Stmt.rec (motive := fun _ => Hex)
    (fun _ x => read a0 a1 a2 a3 a4 a5 a6 a7 x)
    (fun _ x y => Hex.add (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    (fun _ x y => Hex.sub (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    (fun _ x y => Hex.mul (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y))
    (fun _ x y z w => Bool.rec (motive := fun _ => Hex) (read a0 a1 a2 a3 a4 a5 a6 a7 w) (read a0 a1 a2 a3 a4 a5 a6 a7 z) (Hex.lt (read a0 a1 a2 a3 a4 a5 a6 a7 x) (read a0 a1 a2 a3 a4 a5 a6 a7 y)))
    s

/-- The value statement `s` assigns in state `st`. -/
noncomputable def value (s : Stmt) (st : State) : Hex :=
  State.rec (motive := fun _ => Hex) (fun a0 a1 a2 a3 a4 a5 a6 a7 => val s a0 a1 a2 a3 a4 a5 a6 a7) st

/-- `st` with the variable statement `s` assigns set to `x`. -/
noncomputable def after (s : Stmt) (x : Hex) (st : State) : State :=
  State.rec (motive := fun _ => State) (fun a0 a1 a2 a3 a4 a5 a6 a7 => write (target s) x a0 a1 a2 a3 a4 a5 a6 a7) st

/-- The state after statement `s` from state `st`. -/
noncomputable def exec (s : Stmt) (st : State) : State := after s (value s st) st

/-- `k x`, once `x` is a constructor: the value is evaluated before `k` goes on. -/
noncomputable def force (x : Hex) (k : Hex → State) : State :=
  Hex.rec (motive := fun _ => State)
    (k Hex.h0) (k Hex.h1) (k Hex.h2) (k Hex.h3) (k Hex.h4) (k Hex.h5) (k Hex.h6) (k Hex.h7) (k Hex.h8) (k Hex.h9) (k Hex.h10) (k Hex.h11) (k Hex.h12) (k Hex.h13) (k Hex.h14) (k Hex.h15) x

theorem force_eq (x : Hex) (k : Hex → State) : Eq (force x k) (k x) :=
  Hex.rec (motive := fun x => Eq (force x k) (k x)) rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl rfl x

/-- The state after program `p` from state `st`; each statement's value is evaluated before the
next statement runs. `run_nil` and `run_cons` say that this is running the statements in turn. -/
noncomputable def run (p : Prog) (st : State) : State :=
  Prog.rec (motive := fun _ => State → State) (fun st => st)
    (fun s _ ih st => State.rec (motive := fun _ => State)
      (fun a0 a1 a2 a3 a4 a5 a6 a7 => force (val s a0 a1 a2 a3 a4 a5 a6 a7) (fun x => ih (write (target s) x a0 a1 a2 a3 a4 a5 a6 a7))) st) p st

theorem run_nil (st : State) : Eq (run Prog.nil st) st := rfl

theorem run_cons (s : Stmt) (p : Prog) (st : State) : Eq (run (Prog.cons s p) st) (run p (exec s st)) :=
  State.rec (motive := fun st => Eq (run (Prog.cons s p) st) (run p (exec s st)))
    (fun a0 a1 a2 a3 a4 a5 a6 a7 => force_eq (val s a0 a1 a2 a3 a4 a5 a6 a7) (fun x => run p (write (target s) x a0 a1 a2 a3 a4 a5 a6 a7))) st

/-- `s = t`, decided. -/
noncomputable def eqState (s t : State) : Bool :=
  State.rec (motive := fun _ => Bool) (fun a0 a1 a2 a3 a4 a5 a6 a7 =>
    State.rec (motive := fun _ => Bool) (fun y0 y1 y2 y3 y4 y5 y6 y7 =>
      Bool.and (Hex.eq a0 y0) (Bool.and (Hex.eq a1 y1) (Bool.and (Hex.eq a2 y2) (Bool.and (Hex.eq a3 y3) (Bool.and (Hex.eq a4 y4) (Bool.and (Hex.eq a5 y5) (Bool.and (Hex.eq a6 y6) (Hex.eq a7 y7)))))))) t) s

theorem State.congr {a0 a1 a2 a3 a4 a5 a6 a7 y0 y1 y2 y3 y4 y5 y6 y7 : Hex}
    (e0 : Eq a0 y0) (e1 : Eq a1 y1) (e2 : Eq a2 y2) (e3 : Eq a3 y3) (e4 : Eq a4 y4) (e5 : Eq a5 y5) (e6 : Eq a6 y6) (e7 : Eq a7 y7) :
    Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk y0 y1 y2 y3 y4 y5 y6 y7) :=
  Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk z y1 y2 y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 z y2 y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 z y3 y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 z y4 y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 z y5 y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 z y6 y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 a5 z y7))
    (Eq.ndrec (motive := fun z => Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) (State.mk a0 a1 a2 a3 a4 a5 a6 z))
    (rfl) e7) e6) e5) e4) e3) e2) e1) e0

theorem eqState_sound : ∀ (s t : State), Eq (eqState s t) Bool.true → Eq s t :=
  fun s => State.rec (motive := fun s => ∀ (t : State), Eq (eqState s t) Bool.true → Eq s t) (fun a0 a1 a2 a3 a4 a5 a6 a7 t =>
    State.rec (motive := fun t => Eq (eqState (State.mk a0 a1 a2 a3 a4 a5 a6 a7) t) Bool.true → Eq (State.mk a0 a1 a2 a3 a4 a5 a6 a7) t)
      (fun y0 y1 y2 y3 y4 y5 y6 y7 h => State.congr
        (Hex.eq_sound a0 y0 (Bool.and_left h))
        (Hex.eq_sound a1 y1 (Bool.and_left (Bool.and_right h)))
        (Hex.eq_sound a2 y2 (Bool.and_left (Bool.and_right (Bool.and_right h))))
        (Hex.eq_sound a3 y3 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right h)))))
        (Hex.eq_sound a4 y4 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))
        (Hex.eq_sound a5 y5 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h)))))))
        (Hex.eq_sound a6 y6 (Bool.and_left (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))
        (Hex.eq_sound a7 y7 (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right (Bool.and_right h))))))))) t) s

/-! ### Runs of statements with the claimed state after each -/

/-- Statements, each with the state claimed after it. -/
inductive Trace where
  | nil
  | cons (s : Stmt) (post : State) (rest : Trace)

/-- Every step of `t` from `st`: each statement, run from the state claimed before it (`st` for
the first), gives the state claimed after it. -/
noncomputable def Steps (st : State) (t : Trace) : Prop :=
  Trace.rec (motive := fun _ => State → Prop) (fun _ => True)
    (fun s post _ ih st => And (Eq (exec s st) post) (ih post)) t st

/-- `Steps st t`, decided. -/
noncomputable def check (st : State) (t : Trace) : Bool :=
  Trace.rec (motive := fun _ => State → Bool) (fun _ => Bool.true)
    (fun s post _ ih st => Bool.and (eqState (exec s st) post) (ih post)) t st

theorem check_sound : ∀ (st : State) (t : Trace), Eq (check st t) Bool.true → Steps st t :=
  fun st t => Trace.rec (motive := fun t => ∀ (st : State), Eq (check st t) Bool.true → Steps st t)
    (fun _ _ => True.intro)
    (fun s post _ ih st h =>
      And.intro (eqState_sound (exec s st) post (Bool.and_left h)) (ih post (Bool.and_right h)))
    t st

/-- Statements, each with the value claimed for the variable it assigns: the claimed state after
a statement is the claimed state before it with that one variable set. -/
inductive Writes where
  | nil
  | cons (s : Stmt) (x : Hex) (rest : Writes)

/-- Every step of `ws` from `st`: each statement, run from the state claimed before it (`st` for
the first), gives that state with the statement's variable set to the claimed value. -/
noncomputable def Effects (st : State) (ws : Writes) : Prop :=
  Writes.rec (motive := fun _ => State → Prop) (fun _ => True)
    (fun s x _ ih st => And (Eq (exec s st) (after s x st)) (ih (after s x st))) ws st

/-- `Effects st ws`, decided. -/
noncomputable def checkWrites (st : State) (ws : Writes) : Bool :=
  Writes.rec (motive := fun _ => State → Bool) (fun _ => Bool.true)
    (fun s x _ ih st => Bool.and (Hex.eq (value s st) x) (ih (after s x st))) ws st

theorem checkWrites_sound : ∀ (st : State) (ws : Writes), Eq (checkWrites st ws) Bool.true → Effects st ws :=
  fun st ws => Writes.rec (motive := fun ws => ∀ (st : State), Eq (checkWrites st ws) Bool.true → Effects st ws)
    (fun _ _ => True.intro)
    (fun s x _ ih st h =>
      And.intro (congrArg (fun v => after s v st) (Hex.eq_sound (value s st) x (Bool.and_left h)))
        (ih (after s x st) (Bool.and_right h)))
    ws st

end Arith
