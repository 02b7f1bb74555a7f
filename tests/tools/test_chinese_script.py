"""``tools.chinese_script``: which script a Chinese text is written in, and Traditional text from
Simplified without rewriting what Traditional already writes. Cases from a clinic, a railway, a
bakery and a library (none from a benchmark)."""

from __future__ import annotations

import pytest

from tools.chinese_script import chinese_script, fold_to_simplified, to_traditional


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("這家診所週六幾點開門？", "traditional"),
        ("这家诊所周六几点开门？", "simplified"),
        ("高鐵從台北到高雄要多久？", "traditional"),  # 台 is written in both scripts: 鐵 decides
        ("高铁从台北到高雄要多久？", "simplified"),
        ("麵包店的可頌多少錢?", "traditional"),
        # must not decide: no character only one script writes
        ("高英是哪位皇帝的皇后？", None),
        ("What time does the library open?", None),
        ("2024", None),
        ("", None),
    ],
)
def test_the_script_is_read_from_characters_only_one_script_writes(text: str, script: str | None) -> None:
    assert chinese_script(text) == script


def test_a_mixed_text_goes_by_the_majority() -> None:
    assert chinese_script("圖書館的開館時間是几点") == "traditional"  # 圖 書 館 開 館 時 間 against 几 点


@pytest.mark.parametrize(
    ("simplified", "traditional"),
    [
        ("这个发现很重要", "這個發現很重要"),
        ("她剪了头发", "她剪了頭髮"),  # the phrase decides between 發 and 髮
        # 周 is Traditional too (a surname, "circumference"): kept, where s2t would write 週
        ("诊所周六上午开门。[1]", "診所周六上午開門。[1]"),
    ],
)
def test_simplified_text_is_written_in_the_traditional_script(simplified: str, traditional: str) -> None:
    assert to_traditional(simplified) == traditional


@pytest.mark.parametrize(
    "text",
    [
        "台北車站在台北市中正區。",  # OpenCC's s2t would write 臺北
        "他在店裡吃了一碗麵。",  # ... and 喫
        "著作權法於1928年公布。",  # ... and 公佈
        "The bakery opens at 7 a.m. [2]",
        "",
    ],
)
def test_text_already_traditional_or_not_chinese_is_left_as_written(text: str) -> None:
    assert to_traditional(text) == text


def test_only_the_simplified_characters_of_a_mixed_answer_change() -> None:
    assert to_traditional("台北的圖書館在1990年发现了这本书。[1]") == "台北的圖書館在1990年發現了這本書。[1]"


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("臺灣鐵路的時刻表", "台湾铁路的时刻表"),  # 臺 and 台 then match
        ("麵包店幾點開門？", "面包店几点开门？"),
        ("圖書館週末開放", "图书馆周末开放"),
        # must not change: Simplified text, shared characters, anything not Chinese
        ("面包店几点开门？", "面包店几点开门？"),
        ("台北 吃饭 里面", "台北 吃饭 里面"),
        ("Opening hours 9:00–17:00", "Opening hours 9:00–17:00"),
    ],
)
def test_folding_writes_every_traditional_only_character_in_its_simplified_form(
    text: str, folded: str
) -> None:
    assert fold_to_simplified(text) == folded


def test_a_traditional_text_and_its_simplified_original_fold_alike() -> None:
    simplified = "这家诊所的医生每周三下午看诊，挂号请提前一天。"
    assert fold_to_simplified(to_traditional(simplified)) == simplified
