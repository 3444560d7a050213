"""The rewrites applied to LLVM's PTX text (ember/lowering/ptx.py): call-site renumbering and
the neg.s16 widening, each guarded by a substring test for speed - which must not change
what they do."""

from ember.lowering.ptx import _renumber_call_sites, _widen_neg_s16


def test_call_sites_are_numbered_from_zero_in_order_of_appearance():
    ptx = ("\t// callseq 41\n.param .b32 prototype_41\ncall (prototype_41)\n\t// callseq 42\n"
           "prototype_42\n\t// callseq 41\n")
    assert _renumber_call_sites(ptx) == ("\t// callseq 0\n.param .b32 prototype_0\ncall (prototype_0)\n"
                                          "\t// callseq 1\nprototype_1\n\t// callseq 0\n")


def test_only_whole_words_followed_by_digits_are_renumbered():
    ptx = "xcallseq 7 callseq x prototype_ my_prototype_3 callseq 9"
    assert _renumber_call_sites(ptx) == "xcallseq 7 callseq x prototype_ my_prototype_3 callseq 0"
    assert _renumber_call_sites("no calls here") == "no calls here"


def test_neg_s16_is_widened_and_other_text_untouched():
    assert _widen_neg_s16("neg.s32 %r1, %r2;") == "neg.s32 %r1, %r2;"
    out = _widen_neg_s16("\tneg.s16 %rs3, %rs2;\n")
    assert "neg.s16" not in out and "cvt.s32.s16 %neg, %rs2;" in out and "cvt.u16.u32 %rs3, %neg;" in out
