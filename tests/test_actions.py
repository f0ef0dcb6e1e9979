"""A button's data is the command it runs: round trip, the size limit, and forged data."""

from __future__ import annotations

import pytest

from bot.actions import MAX_ACTION_BYTES, answers_in_place, decode_action, encode_action
from bot.models import Command


@pytest.mark.parametrize("command", [
    Command(kind="risks", repo="acme/lumen", pull=1201),
    Command(kind="summary", pull=7035),
    Command(kind="digest", repo="acme/lumen", week="2026-W28"),
    Command(kind="subscribe", topics=("npu", "训练")),
    Command(kind="unsubscribe", repo="acme/lumen", topics=("ckpt",)),
    Command(kind="settings"),
])
def test_a_button_runs_the_command_written_into_it_in_the_clickers_language(
        command: Command) -> None:
    data = encode_action(command)
    assert data is not None and len(data.encode()) <= MAX_ACTION_BYTES
    decoded = decode_action(data, lang="zh")
    assert decoded == Command(kind=command.kind, lang="zh", repo=command.repo,
                              pull=command.pull, week=command.week, topics=command.topics,
                              value=command.value)


def test_a_command_too_long_for_the_smallest_platform_gets_no_button() -> None:
    long_repo = "an-organisation-with-a-long-name/" + "r" * 40
    assert encode_action(Command(kind="risks", repo=long_repo, pull=1)) is None


@pytest.mark.parametrize("data", [
    "", "risks 7035", "[]", '["pd1"]', '["pd2","risks"]', '["pd1","rm -rf"]',
    '["pd1","risks","acme/lumen",-1]', '["pd1","risks","acme/lumen","12"]',
    '["pd1","risks","acme/lumen",99999999999]', '{"kind":"risks"}',
    '["pd1","subscribe","",0,"",["a","b","c","d","e"]]',
    '["pd1","risks","",1,"","","",""]', "x" * 10_000, '["pd1","risks",', '["pd1",["risks"]]',
])
def test_data_that_is_not_a_well_formed_action_runs_nothing(data: str) -> None:
    assert decode_action(data, lang="en") is None


def test_a_button_says_whether_its_answer_replaces_the_message_clicked() -> None:
    command = Command(kind="risks", repo="acme/lumen", pull=1201)
    in_place, beneath = encode_action(command, in_place=True), encode_action(command)
    assert in_place is not None and beneath is not None
    assert len(in_place.encode()) == len(beneath.encode()) + 1  # one byte of the budget
    assert answers_in_place(in_place) and not answers_in_place(beneath)
    # Either runs the same command; a button made before the flag answers beneath.
    assert decode_action(in_place, lang="en") == decode_action(beneath, lang="en")
    assert not answers_in_place('["pd1","risks","acme/lumen",1201]')
    assert not answers_in_place('["pd1r","rm -rf"]') and not answers_in_place("pd1r")


def test_the_flag_can_cost_a_button_that_only_just_fit() -> None:
    command = Command(kind="subscribe", topics=("t" * 32,))
    data = encode_action(command)
    assert data is not None and len(data.encode()) == MAX_ACTION_BYTES
    assert encode_action(command, in_place=True) is None
