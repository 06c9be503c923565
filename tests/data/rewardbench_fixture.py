"""Small RewardBench / M-RewardBench snapshots in the hub's layout and schema, written by the tests.

`write_snapshot(root)` makes `root/reward-bench/data/filtered-00000-of-00001.parquet` and
`root/multilingual-reward-bench/<config>/test-00000-of-00001.parquet` for every one of the 23
configured languages (the documented layout of the pinned revision; `languages=` for fewer): 24
RewardBench records over the four categories (the five LLMBar subsets included), ids not contiguous;
M-RewardBench holds every record but one (FIXTURE_NOWHERE) in each language, and all of those but
FIXTURE_NOT_IN_JA in ja. Texts are real-looking in each script so that the audit passes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgebench.data.rewardbench import language_configs

SUBSETS: list[str] = [
    "alpacaeval-easy",
    "alpacaeval-hard",
    "mt-bench-easy",
    "mt-bench-hard",
    "llmbar-natural",
    "llmbar-adver-neighbor",
    "llmbar-adver-GPTInst",
    "llmbar-adver-GPTOut",
    "llmbar-adver-manual",
    "refusals-dangerous",
    "xstest-should-respond",
    "math-prm",
]
# two records per subset, ids 10, 13, 16, ...
FIXTURE_IDS: list[int] = [10 + 3 * n for n in range(2 * len(SUBSETS))]
FIXTURE_NOWHERE = FIXTURE_IDS[-1]  # in RewardBench only
FIXTURE_NOT_IN_JA = FIXTURE_IDS[3]

# language -> (prompt, chosen, rejected) templates; {n} is the item's number, kept in every language
TEXTS: dict[str, tuple[str, str, str]] = {
    "en": (
        "List {n} fruits, one per line, and say how many there are.",
        "Here are {n} fruits, one per line: apple, banana, cherry. There are {n} of them.",
        "Fruit is healthy. I like apples very much.",
    ),
    "zh": (
        "列出{n}种水果,每行一种,并说明一共有多少种。",
        "以下是{n}种水果,每行一种:苹果、香蕉、樱桃。一共有{n}种。",
        "水果很健康。我非常喜欢苹果。",
    ),
    "ja": (
        "果物を{n}つ、一行に一つずつ挙げて、いくつあるか答えてください。",
        "果物を{n}つ、一行に一つずつ挙げます:りんご、バナナ、さくらんぼ。全部で{n}つです。",
        "果物は健康的です。私はりんごがとても好きです。",
    ),
    "de": (
        "Nenne {n} Früchte, eine pro Zeile, und sage, wie viele es sind.",
        "Hier sind {n} Früchte, eine pro Zeile: Apfel, Banane, Kirsche. Es sind {n} Stück.",
        "Obst ist gesund. Ich mag Äpfel sehr gern.",
    ),
    "ar": (
        "اذكر {n} فواكه، واحدة في كل سطر، وقل كم عددها.",
        "إليك {n} فواكه، واحدة في كل سطر: تفاح، موز، كرز. عددها {n}.",
        "الفاكهة صحية. أحب التفاح كثيرا.",
    ),
    "ru": (
        "Назови {n} фруктов, по одному в строке, и скажи, сколько их.",
        "Вот {n} фруктов, по одному в строке: яблоко, банан, вишня. Их {n}.",
        "Фрукты полезны. Я очень люблю яблоки.",
    ),
    "el": (
        "Ανέφερε {n} φρούτα, ένα ανά γραμμή, και πες πόσα είναι.",
        "Ορίστε {n} φρούτα, ένα ανά γραμμή: μήλο, μπανάνα, κεράσι. Είναι {n}.",
        "Τα φρούτα είναι υγιεινά. Μου αρέσουν πολύ τα μήλα.",
    ),
    "he": (
        "ציין {n} פירות, אחד בכל שורה, ואמור כמה יש.",
        "הנה {n} פירות, אחד בכל שורה: תפוח, בננה, דובדבן. יש {n}.",
        "פירות בריאים. אני מאוד אוהב תפוחים.",
    ),
    "hi": (
        "{n} फल बताइए, हर पंक्ति में एक, और बताइए कि कितने हैं।",
        "ये रहे {n} फल, हर पंक्ति में एक: सेब, केला, चेरी। कुल {n} हैं।",
        "फल सेहतमंद होते हैं। मुझे सेब बहुत पसंद है।",
    ),
    "ko": (
        "과일 {n}개를 한 줄에 하나씩 나열하고 몇 개인지 말하세요.",
        "과일 {n}개를 한 줄에 하나씩 나열합니다: 사과, 바나나, 체리. 모두 {n}개입니다.",
        "과일은 건강에 좋습니다. 저는 사과를 아주 좋아합니다.",
    ),
    "zh-hant": (
        "列出{n}種水果,每行一種,並說明一共有多少種。",
        "以下是{n}種水果,每行一種:蘋果、香蕉、櫻桃。一共有{n}種。",
        "水果很健康。我非常喜歡蘋果。",
    ),
}
# languages without their own sample text borrow one in the same script
SAME_SCRIPT = {"fa": "ar", "uk": "ru"}
CONFIGS = language_configs()


def texts(language: str) -> tuple[str, str, str]:
    return TEXTS.get(language) or TEXTS.get(SAME_SCRIPT.get(language, "")) or TEXTS["de"]


def english_rows() -> list[dict[str, Any]]:
    rows = []
    for index, rb_id in enumerate(FIXTURE_IDS):
        prompt, chosen, rejected = (t.format(n=rb_id) for t in TEXTS["en"])
        rows.append(
            {
                "prompt": prompt,
                "chosen": chosen,
                "chosen_model": "gpt-4",
                "rejected": rejected,
                "rejected_model": f"model-{index % 3}",
                "subset": SUBSETS[index // 2],
                "id": rb_id,
            }
        )
    return rows


def language_rows(language: str, english: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for row in english:
        rb_id = row["id"]
        if rb_id == FIXTURE_NOWHERE or (language == "ja" and rb_id == FIXTURE_NOT_IN_JA):
            continue
        prompt, chosen, rejected = (t.format(n=rb_id) for t in texts(language))
        rows.append(
            {
                "id": rb_id,
                "language": CONFIGS[language],
                "prompt": prompt,
                "chosen": chosen,
                "rejected": rejected,
                "chosen_model": row["chosen_model"],
                "rejected_model": row["rejected_model"],
                "source": row["subset"],
                "category": "chat",
            }
        )
    return rows


def write_parquet(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(list(rows)).to_parquet(path, engine="pyarrow", index=False)
    return path


def rewardbench_file(root: Path) -> Path:
    return root / "reward-bench" / "data" / "filtered-00000-of-00001.parquet"


def language_file(root: Path, language: str) -> Path:
    return root / "multilingual-reward-bench" / CONFIGS[language] / "test-00000-of-00001.parquet"


def write_snapshot(root: Path, languages: Sequence[str] | None = None) -> Path:
    english = english_rows()
    write_parquet(rewardbench_file(root), english)
    for language in sorted(CONFIGS) if languages is None else languages:
        write_parquet(language_file(root, language), language_rows(language, english))
    return root
