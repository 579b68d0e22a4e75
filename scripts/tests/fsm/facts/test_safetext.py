"""Text made safe for one terminal line (facts/safetext.py)."""

from __future__ import annotations

from little_loops.fsm.facts.safetext import SHOWN_CHARS, one_line, output_line, shown


def test_one_line_escapes_controls_and_keeps_everything_else() -> None:
    assert one_line("plain text, é, 日本") == "plain text, é, 日本"
    assert one_line("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert one_line("\x1b[31mred\x7f\x85") == "\\x1b[31mred\\x7f\\x85"
    assert one_line(42) == "42"


def test_one_line_escapes_the_bidi_controls_and_keeps_right_to_left_text() -> None:
    # (printed raw, they reorder what the terminal shows: "Trojan Source")
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert one_line(f"a{controls}b") == (
        "a\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069b"
    )
    assert one_line("שלום, مرحبا") == "שלום, مرحبا"
    assert one_line("\u200d\u2060\u202f") == "\u200d\u2060\u202f"  # neighbours, not bidi


def test_shown_leaves_out_the_middle_of_a_long_text() -> None:
    assert shown("short") == "short"
    text = "a" * 400 + "b" * 300 + "c" * 500
    cut = shown(text)
    assert cut.startswith("a" * 400 + " … (")
    assert cut.endswith(") … " + "c" * 500)
    assert "(300 characters left out)" in cut
    assert shown("x" * SHOWN_CHARS) == "x" * SHOWN_CHARS
    assert shown("ab\ncdefghij", limit=5) == "ab … (8 characters left out) … ij"


def test_output_line_keeps_colours_on_a_terminal_and_escapes_every_other_control() -> None:
    hostile = "\x1b[31mred\x1b[0m \x1b]0;owned\x07 \x1b]52;c;ZWNobw==\x07 \x1b[2J\x1b[H\rover"
    assert output_line(hostile, colors=True) == (
        "\x1b[31mred\x1b[0m \\x1b]0;owned\\x07 \\x1b]52;c;ZWNobw==\\x07 \\x1b[2J\\x1b[H\\rover"
        "\x1b[0m"  # the colour reset each coloured line ends with
    )
    assert output_line(hostile, colors=False) == (
        "red \\x1b]0;owned\\x07 \\x1b]52;c;ZWNobw==\\x07 \\x1b[2J\\x1b[H\\rover"
    )


def test_output_line_keeps_tabs_and_text_and_drops_a_crlf_s_cr() -> None:
    assert output_line("a\tb é 日本", colors=False) == "a\tb é 日本"
    assert output_line("windows line\r", colors=True) == "windows line"
    assert output_line("\x00\x7f\x9b", colors=True) == "\\x00\\x7f\\x9b"  # NUL, DEL, C1 CSI
