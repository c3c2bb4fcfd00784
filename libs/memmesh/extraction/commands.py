"""Memory-control commands and correction pairs (seed 001 §2.11.11, §2.21-2.22, Q13)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .anchors import WordScreen, required_words
from .lexicon import (
    DEVICE_ITEMS,
    MONTHS,
    PLACES_GONE_BACK_TO,
    TITLE_WORDS,
    UNIT_SYSTEMS,
    WEEKDAYS,
)
from .model import Command, Correction
from .polite import plain_request
from .terse import CLEFT
from .text import normalize, split_clauses

_TOPIC = r"(?P<target>[^,.!?;]+?)"
_END = r"(?=\s*(?:[,.!?;]|$|\s+(?:and|but|because|so|please|thanks|I)\b))"
_IMPERATIVE = (
    r"(?:^|[,.!?;]\s*|\b(?:please you|please|pls|plz|kindly|can you|could you|would you|will you|just|actually|"
    r"now|and|also|so|then|ok|okay|I want you to|I need you to|I'd like you to|you can|"
    r"you should|you must|you have to|you need to|go ahead and|feel free to|"
    r"I'd appreciate it if you'd|I'd appreciate it if you)\s+)"
)
# Words that erase (a forget is said many ways).
_ERASE = (
    r"(?:forget|delete|erase|remove|wipe|scrub|scratch|purge|clear|drop|discard|trash|destroy|"
    r"get rid of|lose|reset|nuke|zap|blow away|throw (?:away|out)|un-?remember|unlearn|bin|ditch)"
)
# What a memory of the user is called.
_HOLDINGS = (
    r"(?:everything|all|anything|every (?:single |last )?(?:thing|bit|detail|fact|memory)|"
    r"all (?:of )?(?:the )?(?:stuff|things|data|info|information|memories|details|facts))"
)
_YOU_KEEP = (
    r"(?:(?:you(?:'ve| have)?\s+(?:ever\s+|got\s+)?(?:know|have|remember(?:ed)?|stored|saved|kept|"
    r"learned|learnt|collected|gathered|recorded|got|picked up)(?:\s+(?:stored|saved|on file))?|"
    r"I(?:'ve| have)?\s+(?:ever\s+)?(?:told you|said|shared|mentioned))\s+)"
)
# Said of a whole erasure: "forget me entirely".
_WHOLLY = r"(?:entirely|completely|altogether|for good|forever|totally)"
# Starting over, as people say it after a full wipe.
_START_OVER = r"(?:start(?:ing)? (?:over|again|fresh|from (?:zero|scratch|nothing))|from scratch)"
# What the user said in this conversation (as opposed to one topic).
_IN_THIS_TALK = (
    r"(?:today|so far|just now|earlier|in this (?:conversation|chat|session|call|talk)|here|"
    r"this (?:morning|afternoon|evening|session))"
)

# Going back to an earlier topic.
_RETURN_TO = (
    r"(?:resume|continue(?:\s+with)?|reopen|re-open|revisit|return to|(?:go|get|come|head|circle|"
    r"jump|switch|dive)\s+back\s+(?:in)?to|pick\s+(?:back\s+)?up(?:\s+on)?|carry\s+on\s+with)"
)
_THREAD = r"(?:thread|conversation|convo|chat|discussion|talk|brainstorm(?:ing)?(?:\s+session)?)"
# When the conversation was had: "the conversation from yesterday about my visa".
_WHEN_WE_HAD = (
    r"(?:(?:(?:that\s+)?we\s+had\s+)?(?:from\s+)?(?:yesterday|earlier|before|the other day|"
    r"last\s+(?:time|night|week)|this\s+morning|on\s+\w+day)\s+)?"
)
# A politeness word people slip between a verb and its object ("continue please the chat").
_PLEASE = r"(?:(?:please|kindly|just|now|again)\s+)?"
# "back to the hotel", "back to my parents for Christmas": going somewhere, not to a topic.
_TOPIC_NOT_A_PLACE = (
    # "back to the previous song", "go back to the last page": a player or a document, no topic.
    r"(?!(?:previous|next|last|other|first|same)\s+(?:song|track|tune|page|slide|screen|episode|"
    r"chapter|question|step|station|channel|video|photo|picture|level|menu|tab)s?\b)"
    rf"(?!(?:{PLACES_GONE_BACK_TO}|"
    r"drawing board|grind|beginning|start|top|basics|normal|reality|future|past)"
    # ...as the place itself: it ends the clause or a plan word follows ("back to the hotel
    # before dark"); "back to the kitchen renovation" is a topic.
    r"(?:\s*(?:$|[,.!?;])|\s+(?:for|to|at|in|on|with|after|before|tonight|tomorrow|today|later|"
    r"now|and|but|so|then|by|soon|when|once|again|early|late|we|I|you|they)\b))"
)
# A short topic that ends the clause (no "for Christmas", "tomorrow" or other plan words in it).
_SHORT_TOPIC = (
    r"(?P<target>[\w'-]+(?:\s+(?!(?:tomorrow|tonight|today|next|later|soon|after|for|from|at|this|on|"
    r"in|with|when|once|by|and|but|so)\b)[\w'-]+){0,3})"
)
_MENTION = (
    r"(?:mention|bring up|talk about|speak about|ask (?:me )?about|remind me (?:of|about)|raise|"
    r"go on about|discuss)"
)
# Words for the user's stored memories as a whole (global recall mode, not one item).
_REMEMBERED_STUFF = (
    r"(?:(?:my|your|the|old|past)\s+memories|memories|old (?:stuff|things|conversations|topics)|"
    r"past (?:stuff|things|conversations)|(?:the\s+)?(?:things|stuff|anything|what|everything)\s+"
    r"(?:that\s+)?you\s+(?:remember|know|have (?:stored|saved)|stored|saved)(?:\s+about\s+me)?)"
)
# Where a memory of the user is kept.
_MEMORY_PLACE = r"(?:memory|memories|memory bank|notes|records?|profile|long-term memory)"
_DONT = r"(?:don't|do not|never|please don't|(?:can|could|would|will) you not)"

# Ordered: forgetting everything before a thread, thread commands before generic forget/store,
# global recall mode before pull-only.
_COMMAND_PATTERNS: tuple[tuple[Command, str], ...] = (
    (
        Command.FORGET_TONE,
        r"\b(?:forget|reset|clear|erase|delete|drop|wipe|undo|unlearn)\b[^.!?]{0,40}?"
        r"\b(?:how|the\s+way)\s+(?:I\s+(?:like|prefer|want)\s+(?:to\s+be\s+(?:spoken|talked)\s+to|"
        r"you\s+to\s+(?:talk|speak|sound)|being\s+(?:spoken|talked)\s+to)|"
        r"you(?:'ve| have)?\s+(?:talk|speak|been\s+talking|been\s+speaking)\s+to\s+me)",
    ),
    (
        Command.FORGET_TONE,
        r"\b(?:forget|reset|clear|erase|delete|drop|wipe|unlearn)\s+(?:my|your|the)\s+"
        r"(?:tone(?:\s+(?:preferences?|settings?))?|(?:communication|speaking|conversational)\s+"
        r"(?:style|preferences?)|style\s+preferences?)\b",
    ),
    (
        Command.FORGET_TONE,
        r"\bstop\s+adapting\s+(?:your\s+tone|to\s+(?:me|my\s+moods?)|how\s+you\s+(?:talk|speak))|"
        r"\bgo\s+back\s+to\s+your\s+(?:normal|default|usual|regular)\s+"
        r"(?:tone|voice|style|way\s+of\s+(?:talking|speaking))",
    ),
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:out\s+)?(?:absolutely\s+|literally\s+)?(?:{_HOLDINGS}\s+(?:that\s+|what\s+)?"
        rf"{_YOU_KEEP}?|what\s+{_YOU_KEEP}|the\s+(?:stuff|things|info|information|data|details|facts|"
        rf"memories)\s+(?:that\s+)?{_YOU_KEEP}?)(?:about|on|of)\s+me\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"(?:^|[.!?;]\s*)(?:reset|wipe|erase|delete|clear)(?:\s+(?:me|it))?\s*[.!,]\s*(?:all of it|"
        r"everything|all of me|the lot)\s*(?:[.!,;]|$)",
    ),
    # "Full wipe. Everything you know about me.", "Full wipe please, the lot.": a wipe named,
    # then the whole of the user or the whole said alone.
    (
        Command.FORGET_EVERYTHING,
        r"(?:^|[.!?;]\s*)(?:a\s+)?(?:full|total|complete)\s+(?:wipe|reset|erase|purge)(?:\s+please)?\s*[.!,:;-]?\s*"
        r"(?:(?:of\s+)?(?:everything|all)\b[^.!?]{0,40}?\b(?:about|on|of)\s+me\b|"
        r"(?:everything|all of it|the lot)\s*(?:[.!]|$))",
    ),
    # "wipe it all, every single thing you've got on me": the whole said again, of the user.
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:it all|all of it|everything)\s*,\s*{_HOLDINGS}\s+(?:that\s+)?"
        rf"{_YOU_KEEP}?(?:about|on|of)\s+me\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"\bforget\s+(?:about\s+)?(?:who I am|(?:that\s+)?I (?:ever\s+)?exist(?:ed)?)"
        rf"(?:\s+{_WHOLLY})?\s*(?:[,.!?;]|$|\s+(?:please|and|{_START_OVER})\b)",
    ),
    # A bare "forget (about) me" is also what people say venting ("just forget about me,
    # apparently that's what everyone does"): it erases the user only when it is asked of
    # the assistant ("can you forget me", "forget me please") or said to be complete or a
    # fresh start ("forget me entirely", "forget me and start over").
    (
        Command.FORGET_EVERYTHING,
        rf"\bforget\s+(?:about\s+)?me\s+{_WHOLLY}\b|"
        rf"\bforget\s+(?:about\s+)?me\s*,?\s+(?:please\b|(?:and\s+)?{_START_OVER})|"
        r"(?:\bplease|\b(?:can|could|would|will)\s+you|\bI(?:'d| would)?\s+(?:want|like|need)\s+you\s+to)"
        r"\s+(?:just\s+)?forget\s+(?:about\s+)?me\s*(?:[,.!?;]|$)",
    ),
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:out\s+)?(?:all\s+(?:of\s+)?|everything\s+(?:in\s+)?)?my\s+(?:whole\s+|entire\s+)?"
        r"(?:personal\s+)?(?:data|info|informations?|profile|memories|records|details|file|stuff)\b"
        r"(?!\s+(?:about|on|for|from)\b)",
    ),
    # "forget everything I ever told you": all the user said, unless the talk is named
    # ("… I told you today" is this conversation).
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:absolutely\s+)?(?:everything|all)\s+(?:that\s+)?I(?:'ve| have)?\s+(?:ever\s+)?"
        rf"(?:told you|said to you|shared with you)\b(?!\s+(?:about|on|regarding)\b|\s+{_IN_THIS_TALK})",
    ),
    # "Erase all stored memories.", "delete all the saved data" (not "… memories of Rome").
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+all\s+(?:of\s+)?(?:the\s+|your\s+)?(?:stored|saved|kept)\s+"
        r"(?:memories|data|info|information)\b(?!\s+(?:about|on|of|from)\s+(?!me\b))",
    ),
    # "wipe me from your memory completely"
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+me\s+(?:completely\s+|entirely\s+|totally\s+)?(?:out\s+of|from|off)\s+"
        rf"(?:your\s+|the\s+)?(?:{_MEMORY_PLACE}|system|database)\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"\b(?:wipe|erase|clear|reset|delete|purge|empty|format)\s+(?:all\s+(?:of\s+)?)?your\s+"
        r"(?:entire\s+|whole\s+)?(?:memory|memories)(?:\s+(?:of|about)\s+me)?\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"(?:^|[,.!?;]\s*|\b(?:please|just|and|so)\s+)(?:forget|erase|wipe|delete)\s+(?:absolutely\s+)?"
        r"(?:everything|it all|all of it)\s*(?:[.!]|$|,\s*(?:please|start|I want|from scratch)|"
        r"\s+(?:please|from scratch|and start over)\b)",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:forget|wipe|delete|erase|clear|drop|scrap|trash|remove|scratch|discard|purge)\s+"
        r"(?:all\s+(?:of\s+)?)?(?:this|that|the|our|today's)\s+"
        r"(?:whole\s+|hole\s+|entire\s+|last\s+|current\s+)?(?:thread|conversation|convo|chat|"
        r"discussion|session|call|talk|exchange|back-and-forth)\b"
        rf"(?:\s+(?:about|on)\s+{_TOPIC}{_END})?",
    ),
    # "this conversation, please erase it completely", "this whole chat about the move — bin it"
    (
        Command.FORGET_THREAD,
        r"(?:^|[.!?;,]\s*)(?:this|that|our|today's)\s+(?:whole\s+|entire\s+)?(?:conversation|convo|chat|"
        r"session|talk|thread|back-and-forth|back and forth)(?:\s+(?:about|on)\s+[^,.!?;\u2014\u2013]{1,40}?)?\s*(?:,|\u2014|\u2013|-)\s*(?:please\s+|can you\s+|could you\s+|just\s+)*(?:forget|delete|erase|wipe|"
        r"clear|scrap|trash|remove|discard|bin|ditch|nuke)\s+(?:it|that)\b",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:pretend|act like|act as if)\s+(?:this|that|the|our)\s+(?:whole\s+|entire\s+)?"
        r"(?:conversation|chat|talk|session|call)\s+(?:never|didn't|did not)\s+happen",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:pretend|act like|act as if)\s+(?:we|I)\s+(?:never|didn't|did not)\s+(?:had|have|did)\s+"
        r"(?:this|that|the|our|today's)\s+(?:whole\s+|entire\s+|last\s+)?"
        r"(?:conversation|chat|talk|session|call|discussion)\b",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:this|that|our)\s+(?:whole\s+|entire\s+)?(?:conversation|chat|talk|session|call)\s+"
        r"(?:never happened|didn't happen|did not happen|is off the record|stays off the record)|"
        # "yeah so this chat just pretend it never happened".
        r"\b(?:this|that|our)\s+(?:whole\s+|entire\s+)?(?:conversation|chat|talk|session|call),?\s+"
        r"(?:just\s+)?(?:pretend|act like|act as if)\s+it\s+(?:never|didn't|did not)\s+happen",
    ),
    # "Can you go full amnesia on me?": all of the user, gone.
    (
        Command.FORGET_EVERYTHING,
        r"\b(?:go|going)\s+(?:full|total|complete)\s+amnesia\s+on\s+me\b",
    ),
    # "forget everything in this chat about the party": what was said here, not all of the user.
    (
        Command.FORGET_THREAD,
        rf"\b{_ERASE}\s+(?:everything|all|anything|whatever)\s+(?:of\s+)?(?:in|from)\s+"
        r"(?:this|our|today's)\s+(?:conversation|convo|chat|thread|session|talk|discussion)\b",
    ),
    (
        Command.FORGET_THREAD,
        rf"\b{_ERASE}\s+(?:everything|all|anything|what|all that|whatever)\s+(?:that\s+)?"
        r"(?:we(?:'ve| have)?\s+(?:just\s+)?(?:talked about|discussed|said|covered|chatted about|"
        r"spoke about|went over)|I(?:'ve| have)?\s+(?:just\s+)?(?:said|told you|mentioned|shared)"
        rf"(?:\s+to\s+you)?\s+{_IN_THIS_TALK})",
    ),
    (
        Command.RESUME_THREAD,
        rf"\b{_RETURN_TO}\s+{_PLEASE}(?:the|our|that)\s+(?:old\s+|earlier\s+|previous\s+)?{_THREAD}\s+"
        rf"{_WHEN_WE_HAD}(?:about|on|of)\s+{_TOPIC}{_END}",
    ),
    (
        Command.RESUME_THREAD,
        rf"\b{_RETURN_TO}\s+{_PLEASE}(?:the|our|that)\s+{_TOPIC}\s+{_THREAD}\b",
    ),
    # "Back to the dog-training chat from Tuesday", "open again our talk about the party",
    # "go back to what we were discussing about my garden": a conversation named.
    (
        Command.RESUME_THREAD,
        rf"(?:^|[.!?;]\s*)(?:so\s+|ok\s+|okay\s+)?back\s+to\s+(?:the|our|that)\s+{_TOPIC}\s+{_THREAD}\b|"
        rf"\b(?:open|start)\s+again\s+(?:the|our|that)\s+{_THREAD}\s+(?:about|on|of)\s+(?:the\s+)?"
        r"(?P<target2>[^,.!?;]+?)(?=\s*(?:[,.!?;]|$))|"
        rf"\b{_RETURN_TO}\s+what\s+we\s+(?:were|was)\s+(?:discussing|talking\s+about|saying)\s+"
        r"(?:about|on)\s+(?:the\s+)?(?P<target3>[^,.!?;]+?)(?=\s*(?:[,.!?;—–-]|$))",
    ),
    # "Resume: tax return." as a terse instruction
    (
        Command.RESUME_THREAD,
        r"(?:^|[.!?;]\s*)(?:resume|continue|reopen)\s*:\s*(?P<target>[\w'-]+(?:\s+[\w'-]+){0,3})"
        r"\s*(?:[.!]|$)",
    ),
    # "we go back please to the conversation of the trip to Morocco"
    (
        Command.RESUME_THREAD,
        rf"\b(?:go|come|get)\s+back\s+{_PLEASE}to\s+(?:the|our|that)\s+{_THREAD}\s+(?:about|on|of)\s+"
        rf"(?:the\s+)?{_TOPIC}{_END}",
    ),
    # "open the guitar thread again": plain "open" names a file or an app unless it is "again".
    (
        Command.RESUME_THREAD,
        rf"\b(?:open|pull up|bring back)\s+(?:the|our|that)\s+{_TOPIC}\s+{_THREAD}\s+(?:again|back up)\b",
    ),
    # "let's get back to the Japan itinerary", "back to the budget spreadsheet."
    (
        Command.RESUME_THREAD,
        r"(?:(?:^|[.!?;]\s*)(?:(?:ok|okay|right|alright|anyway|so|now)[ ,]+)?|\b(?:let's|let us|can we|"
        r"could we|shall we|we can|we could|I want to|I'd like to|please|now)\s+(?:(?:go|get|come|head|"
        r"circle|jump|switch)\s+)?)back\s+to\s+(?:the|our|that|my)\s+"
        rf"{_TOPIC_NOT_A_PLACE}{_SHORT_TOPIC}{_END}",
    ),
    (
        Command.RESUME_THREAD,
        r"\b(?:let's|let us|can we|could we|shall we|we can|we could|I want to|I'd like to)\s+"
        rf"(?:return to|revisit)\s+(?:the|our|that|my)\s+{_TOPIC_NOT_A_PLACE}{_SHORT_TOPIC}{_END}",
    ),
    # "that long chat about my licence? I'd like to carry on with that one": the talk just named.
    (
        Command.RESUME_THREAD,
        rf"\b{_THREAD}\b[^.!?]{{0,80}}[.!?]?\s*[^.!?]{{0,30}}?\b(?:carry on|continue|pick (?:back )?up)\s+"
        r"(?:with\s+|on\s+)?(?:that|this)\s+one\b",
    ),
    # "where were we with the garden planning"
    (
        Command.RESUME_THREAD,
        r"\bwhere\s+(?:were we|did we (?:leave off|leave it|leave things|get to|stop)|was I)\s+"
        rf"(?:with|on)\s+(?:the\s+|our\s+|my\s+)?{_TOPIC}{_END}",
    ),
    (
        Command.RESUME_THREAD,
        rf"\b(?:pick\s+(?:back\s+)?up\s+(?:where we left off\s+)?|picking\s+(?:back\s+)?up\s+where\s+"
        rf"we\s+left\s+off\s+)(?:on|with)\s+(?:the|our)?\s*{_TOPIC}"
        rf"{_END}",
    ),
    (
        Command.RESUME_THREAD,
        r"\b(?:continue|carry on|resume)\s+(?:from\s+)?where\s+we\s+(?:left off|stopped)\s+(?:on|with)\s+"
        rf"(?:the\s+|our\s+|my\s+)?{_TOPIC}{_END}",
    ),
    (
        Command.RESUME_THREAD,
        r"\b(?:let's|let us|can we|could we|shall we)\s+(?:continue|carry on)\s+(?:with|on)\s+"
        rf"(?:the|our|my)\s+{_TOPIC_NOT_A_PLACE}{_SHORT_TOPIC}{_END}",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:auto-?resume|resume\b[^,.!?]*\bautomatically)",
    ),
    # "just keep it all quiet unless I ask you to recall something": everything held back.
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\bkeep\s+(?:it all|everything|all of it)\s+(?:quiet|to yourself|in the background)\s+"
        r"(?:unless|until)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+)?ask",
    ),
    # "memory: ask-only mode", "switch to ask-only"
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:ask|asked|when[- ]asked)[- ]only\s+(?:mode|setting|memory|recall)\b|"
        r"\b(?:switch|go|set \w+|put \w+)\s+(?:to|in|into)\s+ask[- ]only\b",
    ),
    # "stop automatically resuming where we left off", "quit picking things up on your own"
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never|stop|quit|no more|no)\s+(?:\w+\s+)?(?:auto-?resum(?:e|ing)\b|"
        r"automatically\s+(?:resum|continu|pick)|(?:resum(?:e|ing)|continu(?:e|ing)|pick(?:ing)?\s+"
        r"(?:things\s+)?up)\b[^,.!?]*\b(?:automatically|on your own|by yourself|unprompted))",
    ),
    # "don't use my memories by yourself", "I'd rather you didn't volunteer things you remember"
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never|didn't|did not|not|stop|quit)\s+(?:\w+\s+)?(?:use|using|bring up|"
        r"bringing up|mention|mentioning|volunteer|volunteering|surface|surfacing|pull up|pulling up|"
        rf"raise|raising|offer|offering|recall|recalling)\s+{_REMEMBERED_STUFF}",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\bonly\s+(?:use|bring up|mention|recall|surface|pull up|raise)\s+"
        rf"{_REMEMBERED_STUFF}\s+(?:if|when|once)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?(?:ask|say so|want)",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:keep|put|have)\s+(?:everything|all of it|it all|all (?:of )?my (?:stuff|memories|info)|"
        rf"{_REMEMBERED_STUFF})\s+on\s+a\s+need[- ]to[- ](?:ask|know)\s+basis",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        # Not "I have HIV, this only recall if I ask": what "this" points back at is one topic.
        r"(?<!\bthis\s)(?<!\bthat\s)(?<!\bit\s)"
        r"\bonly\s+(?:resume|recall|bring (?:stuff|things) up)\s+(?:stuff\s+|things\s+|anything\s+)?"
        r"(?:if|when)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?ask",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring up|mention|resurface|surface|pull up)\s+"
        r"(?:old|past|previous|earlier)\s+(?:stuff|things|conversations|memories|topics)",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring|pull)\s+(?:anything|stuff|things)\s+up\s+unless",
    ),
    # "never bring old stuff up unprompted": the particle after what is remembered as a whole.
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring|pull|dig)\s+(?:old|past|previous|earlier)\s+"
        r"(?:stuff|things|conversations|memories|topics)\s+up\b",
    ),
    # "don't bring up stuff from before unless I ask", "don't use my history unless I tell you
    # to": what is remembered as a whole (one item is PULL_ONLY).
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring up|pull up|use|mention|raise|dig up)\s+"
        r"(?:anything|stuff|things|old stuff|my (?:history|past|memories|data|info)|what you "
        r"(?:remember|know))(?:\s+(?:from (?:before|the past|earlier|last time)|you (?:remember|know)))?"
        r"\s+unless\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?(?:ask|tell you|say so|want)",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\bwait\s+(?:for me to ask|until I ask)\s+before\s+(?:using|bringing up|mentioning|"
        rf"raising)\s+(?:anything|what you (?:remember|know)|my (?:history|past|memories)|"
        rf"{_REMEMBERED_STUFF})",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:recall|bring up|mention|remind me (?:of|about)|surface|use|raise)\s+"
        r"(?:this|that|it|those|these)\b[^.!?]*\b(?:if|when)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?"
        # "only mention it if I bring it up"
        r"(?:ask|bring\s+(?:it|this|that|them)\s+up|raise\s+(?:it|this|that|them))",
    ),
    # "only talk about that if I ask", "only bring it back if I raise it first", "only pull it
    # out if I ask", "tell me only when I ask"; "keep it in your pocket unless I bring it up",
    # "keep my dad's cancer stuff on ice unless I ask": one topic, held until asked.
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:talk|speak)\s+about\s+(?:this|that|it)\s+(?:if|when)\s+I\s+ask|"
        r"\bonly\s+(?:bring|pull)\s+(?:this|that|it|them)\s+(?:back|out)\s+(?:if|when)\s+I\s+"
        r"(?:ask|raise\s+it|bring\s+it\s+up|mention\s+it)|"
        r"\btell\s+me\s+only\s+(?:if|when)\s+I\s+ask|"
        r"\bkeep\s+(?:it|this|that|them|(?P<target>(?:my|the|our)\s+[^,.!?;]+?))\s+"
        r"(?:on\s+ice|in\s+your\s+pocket|tucked\s+away|under\s+wraps)\b[^.!?]{0,30}?"
        r"\b(?:unless|until|till)\s+I\s+(?:ask|bring\s+(?:it|them)\s+up|mention\s+(?:it|them)|raise\s+(?:it|them))",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:this|that|it)\s+(?:you\s+)?only\s+(?:recall|bring up|mention|use|raise)\s+(?:if|when)\s+I\s+"
        r"(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?ask",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:bring|pull)\s+(?:this|that|it|those|these)\s+up\s+(?:if|when)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?ask",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:bring up|mention|talk about|recall|raise|use|share|surface)\s+"
        r"(?P<target>(?:my|the|our)\s+[^,.!?;]+?)\s+(?:if|when)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?(?:ask|bring (?:it|them) up)",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not|never)\s+(?:bring up|mention|raise|talk about|volunteer|share|use|offer)\s+"
        r"(?P<target>(?:my|the|our)\s+[^,.!?;]+?)\s+unless\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?(?:ask|bring (?:it|them) up)",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not|never)\s+(?:bring|mention|raise)\s+(?:this|that|it)\s+(?:up\s+)?"
        r"unless\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?(?:ask|do|say so|bring it up|mention it|raise it)\b",
    ),
    # "only if I ask, talk about my health": the condition first.
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:if|when)\s+I\s+(?:specifically\s+|explicitly\s+|actually\s+|directly\s+)?ask(?:\s+you)?\s*,?\s*(?:you can\s+|please\s+)?(?:talk about|"
        r"speak about|mention|bring up|raise|use|share)\s+(?P<target>(?:my|the|our)\s+[^,.!?;]+?)"
        rf"{_END}",
    ),
    # "say it only if I ask", "use it only when I ask you"
    (
        Command.PULL_ONLY,
        r"\b(?:say|mention|use|recall|bring|raise|talk about|speak about|speak of|surface|share|"
        r"remind me of)\s+(?:it|this|that|them|those|these)\s+(?:up\s+)?only\s+(?:if|when|once)\s+I\s+"
        r"(?:ask|request|say so|bring it up|mention it|raise it|want)",
    ),
    # "keep that on the shelf unless I raise it": held back until the user brings it up.
    (
        Command.PULL_ONLY,
        r"\bkeep\s+(?:it|this|that|them|those)\s+(?:on the shelf|in your back pocket|in reserve|"
        r"in the background|to yourself)\s+(?:unless|until)\s+I\s+(?:ask|request it|raise it|"
        r"bring it up|mention it)",
    ),
    # "Mention only if asked." said after the fact it is about
    (
        Command.PULL_ONLY,
        r"(?:^|[.!?;]\s*)(?:(?:please|and|but)\s+)?(?:mention|bring up|raise|say|use)\s+(?:it\s+)?"
        r"only\s+(?:if|when)\s+(?:I\s+)?ask(?:ed)?(?:\s+(?:for it|first|by me))?\s*(?:[.!,;]|$)",
    ),
    # "keep the therapy stuff on a need-to-ask basis"
    (
        Command.PULL_ONLY,
        r"(?:\b(?:keep|put|have|leave)\s+(?P<target>[^,.!?;]+?)\s+)?\bon\s+a\s+need[- ]to[- ]"
        r"(?:ask|know)\s+basis\b",
    ),
    # "I don't want it coming up on its own", "don't bring it up by yourself"
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not)\s+want\s+(?:it|this|that|them|those)\s+(?:to\s+)?(?:coming|come|popping|"
        r"pop|showing|show|turning|turn)\s+up\s+(?:on its own|by itself|on their own|by themselves|"
        r"unprompted|randomly|out of (?:nowhere|the blue)|unless I)",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not|never|didn't|did not)\s+(?:bring|raise|mention)\s+(?:it|this|that|them)\s+"
        r"(?:up\s+)?(?:on your own|by yourself|yourself|unprompted|out of the blue)",
    ),
    # "Weight stuff: answer only if asked", "Debt stuff: on request only": a labelled topic said
    # only once the user asks.
    (
        Command.PULL_ONLY,
        r"^(?P<target>[^:]{2,40}?)\s*:\s*(?:(?:answer|say|mention|discuss|bring\s+(?:it\s+)?up)\s+)?"
        r"(?:on\s+request\s+only|only\s+on\s+request|only\s+(?:if|when)\s+(?:I\s+ask|asked))\b",
    ),
    # "Enough about the marathon. Drop it.": the talk about it is to stop, nothing is erased.
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;]\s*)(?:(?:that's|that is|ok|okay|right)\s+)?enough\s+(?:about|of|with)\s+"
        r"(?P<target>(?:my|the|our|that|this|all\s+the)\b[^,.!?;]*?)\s*[,.!;-]+\s*"
        r"(?:just\s+)?(?:drop it|let it go|leave it|give it a rest|moving on|change the subject)\b",
    ),
    # "please, no more you speak about my accident", "no more talking about my weight"
    (
        Command.DO_NOT_MENTION,
        # "Drop the topic of my weight.", "Please you don't speak more about my old job".
        r"\bdrop\s+the\s+(?:topic|subject)\s+of\s+"
        rf"(?P<target>(?:my|the|our|that|this)\b[^,.!?;]*?){_END}|"
        r"\b(?:don't|do not)\s+(?:speak|talk)\s+(?:any\s+)?more\s+(?:about|of)\s+"
        rf"(?P<target2>(?:my|the|our|that|this)\b[^,.!?;]*?){_END}",
    ),
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;]\s*)(?:please\s+)?no\s+more\s+(?:you\s+)?(?:speak|talk|mention)(?:ing)?\s+"
        rf"(?:about\s+|of\s+)?(?P<target>(?:my|the|our|that|this)\b[^,.!?;]*?){_END}",
    ),
    (
        Command.DO_NOT_MENTION,
        # "I should stop bringing up the past" is about the speaker, no command.
        r"(?<!\bI should )(?<!\bI need to )(?<!\bI have to )(?<!\bI must )(?<!\bI'll )"
        r"(?<!\bI will )(?<!\bI want to )(?<!\bI try to )(?<!\bwe should )"
        # "she asked me to stop mentioning her ex": someone else's request, reported.
        r"(?<!\bme to )(?<!\bus to )(?<!\bhim to )(?<!\bher to )(?<!\bthem to )"
        rf"\b(?:stop|quit|(?<=\bif you )stopped)\s+(?:mentioning|bringing up|talking about|"
        rf"reminding me (?:about|of)|"
        rf"asking (?:me )?about|nagging me about|referring to|going on about|harping on(?: about)?|"
        rf"suggesting|recommending|"
        rf"dwelling on)\s*{_TOPIC}?{_END}",
    ),
    (Command.DO_NOT_MENTION, r"\b(?:stop|quit)\s+bringing\s+(?P<target>[^,.!?]+?)\s+up\b"),
    # "please stop to suggest me wine": a learner's "stop to" is "stop -ing".
    (
        Command.DO_NOT_MENTION,
        r"(?<!\bI )\bstop\s+to\s+(?:suggest|recommend|mention|talk about|speak about|bring up|"
        rf"remind me (?:of|about)|ask (?:me )?about)\s+(?:me\s+)?{_TOPIC}{_END}",
    ),
    # "could you maybe ease off mentioning my divorce", "lay off the weight comments".
    (
        Command.DO_NOT_MENTION,
        rf"{_IMPERATIVE}(?:(?:maybe|please|just)\s+)?(?:ease|lay|let up)\s+off\s+(?:on\s+)?"
        rf"(?:mentioning|bringing up|talking about|asking about)\s+{_TOPIC}{_END}",
    ),
    # "can we retire the jokes about my height", "drop the comments on my weight".
    (
        Command.DO_NOT_MENTION,
        r"\b(?:retire|drop|cut|skip|ditch|lose)\s+(?:the|your|those|all the)\s+(?:jokes?|comments?|"
        # Of the user's own ("the jokes about cats in your set" are a comedian's).
        rf"remarks?|digs?|lectures?|reminders?)\s+(?:about|on)\s+(?=(?:my|our|me)\b){_TOPIC}{_END}",
    ),
    # "can we retire the topic of my weight loss, for good": a subject closed for the future.
    (
        Command.DO_NOT_MENTION,
        r"\b(?:retire|bury|close|kill)\s+(?:the\s+)?(?:topic|subject)\s+of\s+"
        rf"{_TOPIC}{_END}",
    ),
    # "never bring my divorce up again" (not "I never bring it up", not "you never bring it up").
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;:]\s*|\b(?:please|just|and|so|now|then|ok|okay|also)\s+)"
        r"(?:don't|do not|never|(?:can|could|would|will) you not)\s+(?:ever\s+)?bring\s+"
        r"(?P<target>[^,.!?;]+?)\s+up\b",
    ),
    # "not speak about my father anymore please" (a bare "not", as a learner says it).
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;:]\s*|\b(?:please|pls|plz)\s+)not\s+(?:more\s+)?"
        rf"(?:{_MENTION}|speak about|speak of)\s+{_TOPIC},?\s+(?:again|anymore|any more|ever again|"
        r"from now on|going forward)\b",
    ),
    # "please leave my weight out of our conversations"
    (
        Command.DO_NOT_MENTION,
        rf"{_IMPERATIVE}leave\s+{_TOPIC}\s+out\s+of\s+(?:our|the|your|this|these|future|any)\s+"
        r"(?:conversations?|chats?|talks?|answers?|replies|responses|suggestions|discussions?)\b",
    ),
    # "don't talk about my brother anymore", "you don't bring up Gloria, at all"; said of
    # oneself or others ("I don't talk about it anymore") it is no command.
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;:]\s*|\b(?:please|just|you|and|so|now|then|ok|okay|also)\s+)"
        r"(?:don't|do not|never|(?:can|could|would|will) you not)\s+(?:ever\s+)?"
        rf"{_MENTION}\s+{_TOPIC},?\s+(?:again|anymore|any more|ever again|at all|ever|from now on|"
        r"going forward|in (?:the )?future)\b",
    ),
    # "please don't talk anymore about my old job": a learner puts the "anymore" first.
    (
        Command.DO_NOT_MENTION,
        r"(?:^|[,.!?;:]\s*|\b(?:please|just|and|so|now|then|ok|okay|also)\s+)"
        r"(?:don't|do not|never)\s+(?:talk|speak|ask me)\s+(?:anymore|any more|again|ever again)\s+"
        rf"(?:about|of)\s+{_TOPIC}{_END}",
    ),
    (
        Command.DO_NOT_MENTION,
        r"\bI (?:don't|do not) want to (?:hear|talk) about\s+"
        rf"{_TOPIC}\s+(?:again|anymore|any more|ever again)\b",
    ),
    # "no more reminders about the dentist thing"
    (
        Command.DO_NOT_MENTION,
        r"\bno more\s+(?:reminders?|mentions?|mentioning|talk(?:ing)?|questions|asking|nagging|"
        rf"bringing up)\s+(?:(?:about|of|on)\s+)?{_TOPIC}{_END}",
    ),
    (
        Command.DO_NOT_MENTION,
        r"\bI(?:'d| would)\s+(?:prefer|rather)\s+(?:if\s+)?you\s+(?:didn't|did not|not|don't|never)\s+"
        rf"(?:{_MENTION}|bring)\s*(?:up\s+)?{_TOPIC}?(?:\s+up)?(?:\s+again|\s+anymore)?{_END}",
    ),
    (
        Command.REMEMBER_EVERYTHING,
        r"(?<!do you )(?<!did you )(?<!don't )(?<!do not )(?<!never )(?<!\bI )(?<!\bwe )(?<!\bthey )"
        r"(?<!\bhe )(?<!\bshe )\b(?:remember|save|store|"
        r"keep track of|keep|log|record)\s+(?:absolutely\s+|like\s+)?(?:everything|all of it|it all|"
        r"all (?:what|that) I (?:say|tell you)|all (?:the )?(?:things|stuff) (?:that )?I (?:say|tell you))\b"
        # "keep everything in pesos", "keep it all short": a format, not a retention setting.
        # "keep it all quiet", "keep it all to yourself": discretion, the opposite of recall.
        r"(?!\s+(?:in|as|at|on|to|under|within|below|short|simple|brief|tidy|neat|clean|together|"
        r"organi[sz]ed|separate|consistent|quiet|private|hush|secret|low-key|between)\b)",
    ),
    # "this one's not for the memory banks", "that's not for your records".
    # "incognito mode for this one", "let's go incognito for this bit": a browser's word for
    # what is not kept.
    (
        Command.DO_NOT_STORE,
        r"\bincognito(?:\s+mode)?\s+(?:for|on)\s+(?:this|the\s+next|what)\b|"
        r"\bgo(?:ing)?\s+incognito\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:this|that|it)(?:\s+one|\s+bit)?(?:'s|\s+is)\s+not\s+for\s+(?:the\s+|your\s+)?"
        r"(?:memory\s+banks?|memor(?:y|ies)|records?|files?|notes|remembering|saving|storing|"
        r"keeping)\s*(?:[,.!?;]|$)",
    ),
    (
        Command.DO_NOT_STORE,
        rf"\b(?:{_DONT}|you shouldn't|you should not)\s+(?:ever\s+)?"
        r"(?:remember|save|store|record|log|keep|write down|note down|note|memorize|memorise|hold on to|"
        r"hang on to|file away|file|retain)\s+(?:(?:this|that)\s+(?:one|bit|part)|this|that|it|any of this|"
        r"any of that|any of it|anything|"
        r"what I'm (?:about to say|saying|going to say|gonna say)|the next (?:bit|part|thing))\b"
        r"(?!\s+(?:is|was)\b)",
    ),
    # "can you not write this one down", "don't put it in the memory"
    (
        Command.DO_NOT_STORE,
        rf"\b{_DONT}\s+(?:ever\s+)?(?:write|note|jot|put)\s+(?:this|that|it)(?:\s+(?:one|bit|part))?\s+"
        r"down\b",
    ),
    (
        Command.DO_NOT_STORE,
        rf"\b{_DONT}\s+(?:ever\s+)?(?:put|add|write|save|store|enter|include|keep|stick)\s+(?:this|that|"
        r"it|any of (?:this|that|it))(?:\s+(?:one|bit|part))?\s+(?:in|into|to|on)\s+(?:your\s+|the\s+|"
        rf"my\s+)?{_MEMORY_PLACE}\b",
    ),
    # "keep this out of memory"
    (
        Command.DO_NOT_STORE,
        r"\b(?:keep|leave)\s+(?:this|that|it|all of this|any of this)(?:\s+(?:one|bit|part))?\s+"
        rf"out\s+of\s+(?:your\s+|the\s+|my\s+)?{_MEMORY_PLACE}\b",
    ),
    # "This you don't keep, okay?"
    (
        Command.DO_NOT_STORE,
        r"(?:^|[.!?;,]\s*)(?:please\s+)?(?:this|that)(?:\s+(?:one|bit|part))?\s+(?:you\s+)?(?:don't|do not|"
        r"shouldn't|should not|won't|mustn't|must not)\s+(?:keep|save|store|remember|record|"
        r"write down|note|log|memori[sz]e)(?=\s*(?:[,.!?;:]|$|(?:okay|ok|please|alright)\b))",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:this|that|it)(?:'s| is)(?:n't| not)\s+(?:for|going in(?:to)?)\s+(?:your\s+|the\s+)?"
        rf"(?:record|{_MEMORY_PLACE})\b",
    ),
    # "for this conversation, keep nothing", "save nothing of this" (never "I remember nothing").
    (
        Command.DO_NOT_STORE,
        rf"(?<!\bI )(?<!\bwe )(?<!\bI'll ){_IMPERATIVE}(?:keep|save|store|record|log|remember|"
        r"memori[sz]e|write down)\s+nothing\b",
    ),
    # "I need you to not keep it", "I want you not to save any of this"
    (
        Command.DO_NOT_STORE,
        r"\byou\s+(?:to\s+not|not\s+to)\s+(?:remember|save|store|record|log|keep|memori[sz]e|"
        r"write down|note down)\s+(?:this|that|it|any of (?:this|that|it)|anything)\b",
    ),
    # "no saving. just venting."
    (
        Command.DO_NOT_STORE,
        r"(?:^|[.!?;,:]\s*)no\s+(?:saving|storing|recording|logging|remembering|note-taking|memorizing|"
        r"memorising)(?:\s+(?:this|that|it|please|of (?:this|that|it)|here|this time|today|okay|ok))?"
        r"\s*(?:[.!?,;:]|$)",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:don't|do not|never)\s+(?:keep|make|take|write)\s+(?:a\s+|any\s+)?(?:record|note|notes|"
        r"log|copy|memory)\s+of\s+(?:this|that|it|what I say)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:no need to|you (?:don't|do not) (?:need|have) to|there's no need to)\s+(?:remember|save|"
        r"store|record|keep|log|note)\s+(?:this|that|it)\b",
    ),
    (Command.DO_NOT_STORE, r"\boff[ -](?:the\s+)?record\b"),
    # "please not save this, my visa is expired" (a bare "not", as a learner says it).
    (
        Command.DO_NOT_STORE,
        r"(?:^|[,.!?;:]\s*|\b(?:please|pls|plz)\s+)not\s+(?:save|store|remember|keep|record|write down)\s+"
        r"(?:this|that|it)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bkeep\s+(?:this|that|it)(?:\s+one)?\s+(?:off|out\s+of)\s+(?:the|your|my)\s+"
        r"(?:records?|books|notes|memory|files?)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:this|that|it) (?:stays|is|remains|has to stay|needs to stay|should stay) "
        r"(?:just |strictly )?between (?:us|you and me|ourselves|the two of us)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bkeep (?:this|that|it) (?:just |strictly )?(?:between (?:us|you and me|ourselves|the two of us)|"
        r"to yourself|private|confidential)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:just|strictly|only)\s+between\s+(?:you and me|us|the two of us|ourselves)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"(?:^|[.!?;]\s*)between (?:you and me|us|the two of us|ourselves)\s*[,:]",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bI (?:don't|do not) want (?:this|that|it|any of this|any of that) (?:to be )?(?:saved|stored|"
        r"remembered|kept|on record|recorded|written down|in your memory|logged)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bI(?:'d| would)\s+(?:prefer|rather)\s+(?:if\s+)?you\s+(?:didn't|did not|don't|not)\s+"
        r"(?:remember|save|store|record|keep|log)\s+(?:this|that|it)\b",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+{_PLEASE}(?:what|everything|anything|all|whatever|the stuff|the things?)\s+"
        r"(?:that\s+)?I(?:'ve| have)?\s+(?:ever\s+|just\s+)?(?:told|said|mentioned|shared|said to|say|tell)"
        rf"(?:\s+you)?(?:\s+(?:earlier|before))?(?:\s+(?:about|regarding|on)\s+{_TOPIC}{_END})?",
    ),
    (
        Command.FORGET,
        rf"\b(?:never mind|nevermind|disregard|ignore)\s+(?:what|everything|anything)\s+I\s+"
        rf"(?:told you|said|mentioned)\s+(?:about|regarding)\s+{_TOPIC}{_END}",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}forget\s+(?:that\s+)?I\s+(?:ever\s+)?(?:said|mentioned|told you)"
        rf"(?:\s+(?:anything\s+)?about\s+{_TOPIC}{_END})?",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|remove|wipe|scrub|purge|un-?remember|unlearn)\s+"
        r"(?:that|the fact that)\s+"
        rf"(?P<target>(?:my|I|I'm|I've|I'd|I'll|our)\b[^,.!?;]+?){_END}",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:{_ERASE}|take|get)\s+(?:my|our)\s+{_TOPIC}\s+(?:from|out of)\s+(?:your\s+)?"
        rf"(?:memory|memories|records|notes|files|database|system){_END}",
    ),
    # "can you just wipe all that from your memory": what was just said, taken out of memory.
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:all\s+)?(?:that|this|it|those things)\s+(?:from|out of|off)\s+"
        rf"(?:your\s+)?(?:memory|memories|records|notes|files|database|system){_END}",
    ),
    # "can you take out whatever you saved about it" (about the user as a whole is everything).
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:{_ERASE}|take out)\s+(?:whatever|anything|everything|what)\s+you(?:'ve| have)?\s+"
        r"(?:saved|stored|kept|noted|recorded|written down)\s+(?:about|on)\s+(?:it|that|this|them)\b",
    ),
    (
        Command.FORGET,
        r"(?:^|[,.!?;]\s*|\b(?:please|just|ok|okay|oh)\s+)(?:scratch|strike)\s+that"
        r"(?:\s+from\s+(?:your\s+)?(?:memory|memories|the record|your notes)|\s*(?:[.!]|$))",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|remove|wipe|scrub)\s+(?:that|this|the)\s+"
        r"(?:memory|fact|bit|part|one)\b",
    ),
    # "erase the note you have about my brother's gambling problem": what the assistant keeps
    # of a topic, named as a note of its own.
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+{_PLEASE}(?:the|that|this|your|any|all)\s+(?:\w+\s+)?"
        r"(?:note|notes|memory|memories|entry|entries|record|records|info|information|details?)\s+"
        r"(?:that\s+)?you(?:'ve| have)?\s+(?:have|got|kept|keep|saved|made|stored|written)"
        r"(?:\s+down)?\s+(?:about|on)\s+(?P<target>[^,.!?;]+)",
    ),
    # "you can remove her from what you remember about me": someone or something taken out of
    # the memory, by a pronoun or by name.
    (
        Command.FORGET,
        rf"\b{_ERASE}\s+(?P<target>[^,.!?;]{{1,40}}?)\s+(?:from|out of)\s+(?:what|everything)\s+"
        r"you\s+(?:remember|know|keep|have|store)\b",
    ),
    # "forget the address I told you before", "delete the number I gave you": a thing of the
    # user's, named by the telling of it.
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+{_PLEASE}(?:the|my|that)\s+"
        # "that last thing I said" names no thing of its own (the pattern for it follows).
        r"(?!(?:(?:last|other|first|whole)\s+)?(?:thing|things|bit|part|one|stuff)\b)"
        r"(?P<target>[\w'-]+(?:\s+[\w'-]+){0,3}?)"
        r"\s+(?:that\s+)?I(?:'ve| have)?\s+(?:just\s+)?(?:told|gave|said|mentioned|shared|sent)\b"
        # "forget the milk I told you to buy" is an errand called off, not a memory.
        r"(?!(?:\s+(?:to\s+)?you)?\s+to\b)",
    ),
    # "the old number of my sister, please forget it", "that stuff I told you about my manager,
    # can you wipe it": what is to go comes first (something of the user's, or something they
    # told), the erasing verb after it ("the movie, forget it" is no command).
    (
        Command.FORGET,
        r"(?:^|[.!?;]\s*)(?:(?:oh|and|also|so|um|uh|ok|okay)[ ,]+)*"
        r"(?P<target>[^,.!?;]{0,60}?\b(?:my|I told you|I said|I mentioned|I shared|"
        r"telling you|mentioning|sharing)\b"
        r"[^,.!?;]{0,60}?)(?:,[^,.!?;]{0,60}?)?,\s*(?:please\s+|can you\s+|could you\s+|you can\s+|"
        r"just\s+)*"
        rf"{_ERASE}\s+(?:about\s+)?(?:it|that|them)\b",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|scrub)\s+(?:that|this)\b(?!\s+(?:thread|conversation))",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|un-?remember|unlearn)\s+(?:about\s+)?my\s+{_TOPIC}{_END}",
    ),
    # "can you stop remembering that I smoke" (never "I can't stop remembering that day").
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:stop|quit)\s+(?:remembering|storing|saving|keeping track of)\s+"
        # ...something of the user's ("stop storing your shoes in the hallway" is no command).
        r"(?:that\s+)?(?=(?:I|I'm|I've|I'd|my|me|what I|anything about|everything about|"
        rf"(?:the\s+)?(?:stuff|things|bit|part) about)\b){_TOPIC}{_END}",
    ),
    # "please don't keep the bit about my ex": what was said already is to go.
    (
        Command.FORGET,
        rf"\b{_DONT}\s+(?:keep|remember|store|save|hold on to|hang on to)\s+(?:the\s+)?"
        r"(?:bit|part|stuff|thing|things|info|information|details?|notes?)\s+(?:about|on|regarding)\s+"
        rf"{_TOPIC}{_END}",
    ),
    # "Forget the stuff about my aunt", "delete everything about her" (a pronoun points at
    # what was just said about someone). "Forget about me" alone is no topic (see
    # FORGET_EVERYTHING); "the bit about me wanting a tattoo" is one.
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+{_PLEASE}(?:the\s+(?:thing|stuff|bit|part|fact|info|information|data|"
        r"details?|notes?|memory|memories|entry|entries|record)s?\s+|the (?:bit|part) (?:where|when) I "
        r"(?:said|mentioned|talked|told you)\s+(?:anything\s+|something\s+)?|"
        rf"everything\s+|anything\s+|all\s+|what you know\s+)?about\s+(?!(?:it|that|this)\b)(?!me{_END})"
        rf"(?:my\s+)?{_TOPIC}{_END}",
    ),
    # "Delete my aunt's info", "erase my cousin's address".
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+my\s+(?P<target>[^,.!?;]+?'s\s+[^,.!?;]+?){_END}",
    ),
    # "Delete it.", "erase those" (what was just said).
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:it|those|these|them)\s*(?:[.!]|$|,?\s*please\b)",
    ),
    (
        Command.RECALL_SUMMARY,
        # "what's in my memory file", "what is in my memories".
        r"\bwhat(?:'s|\s+is|s)\s+in\s+my\s+(?:memory|memories)(?:\s+(?:file|bank|profile))?\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bwhat\s+(?:do|did)\s+you\s+(?:remember|know|recall)\s+about\s+me\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bwhat\s+(?:have\s+you\s+|do\s+you\s+)?(?:got\s+|have\s+)?(?:saved|stored|remembered|"
        r"recorded|kept)\s+(?:on|about)\s+me\b",
    ),
    (Command.RECALL_SUMMARY, r"\bwhat\s+(?:have|do)\s+you\s+(?:got|have)\s+(?:on|about)\s+me\b"),
    (
        Command.RECALL_SUMMARY,
        r"\bhow\s+much\s+(?:do|did)\s+you\s+(?:know|remember|have|keep|store)\s+(?:about|on)\s+me\b",
    ),
    # "show me my memory" (not "show me my memories of Paris").
    (
        Command.RECALL_SUMMARY,
        r"\b(?:show|read|give)\s+me\s+(?:my|your)\s+(?:memory|memories|memory profile|file|notes)"
        r"(?:\s+(?:of|about|on)\s+me)?\s*(?:[.!?]|$)",
    ),
    (Command.RECALL_SUMMARY, r"\bwhat(?:'s| is)\s+in\s+(?:your\s+)?memory\s+(?:about|on)\s+me\b"),
    (
        Command.RECALL_SUMMARY,
        r"\b(?:tell|show)\s+me\s+(?:what|everything)\s+you\s+(?:remember|know|have)\s+(?:about|on)\s+me",
    ),
    # "which informations you are keeping about me", "what you remember about me?"
    (
        Command.RECALL_SUMMARY,
        r"\b(?:what|which)\b(?:\s+[\w']+){0,3}?\s+(?:do\s+|did\s+|have\s+|are\s+)?you(?:'ve|'re|\s+have|"
        r"\s+are)?\s+(?:got\s+|still\s+|already\s+|actually\s+)?(?:remember(?:ed|ing)?|know(?:ing)?|recall|"
        r"keep(?:ing)?|kept|stor(?:e|ed|ing)|sav(?:e|ed|ing)|hold(?:ing)?|have|got|record(?:ed|ing)?|"
        r"collect(?:ed|ing)?|track(?:ed|ing)?|learn(?:ed|t)|gathered|picked up)"
        r"(?:\s+(?:stored|saved|on file|so far|in (?:your )?memory))?\s+(?:about|on|of)\s+me\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bwhat(?:'s| is| have| has)\s+(?:been\s+)?(?:stored|saved|kept|recorded|remembered|on file)\s+"
        r"(?:about|on)\s+me\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bdo\s+you\s+(?:still\s+)?(?:remember|know|have)\s+anything\s+(?:about|on)\s+me\b",
    ),
    # "my profile. what's in it?", "what's in my profile"
    (
        Command.RECALL_SUMMARY,
        rf"\b(?:my|your)\s+(?:memory\s+)?(?:profile|{_MEMORY_PLACE})\b[^.!?]{{0,20}}[.!?,:]?\s*"
        r"what(?:'s| is)\s+in\s+(?:it|there)\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\b(?:what(?:'s| is)\s+(?:in|on)|(?:show|read|give|list)(?:\s+me)?|can I see)\s+(?:all\s+)?"
        r"my\s+(?:stored\s+|saved\s+)?(?:memory\s+)?(?:profile|memories)\b(?!\s+(?:of|from)\b)",
    ),
    *(
        # Families heard less often, tried only when none of the above matched.
        (
            Command.RECALL_SUMMARY,
            r"\b(?:show|list|read|tell|give|recap|summari[sz]e|run through|go through)\s+(?:me\s+)?"
            r"(?:back\s+)?(?:all\s+|every\s+)?(?:the\s+)?(?:things|stuff|info|information|everything|"
            r"what|memories)\s+(?:that\s+)?you(?:'ve|'re| have| are)?\s+(?:got\s+|already\s+)?(?:know|"
            r"saved|stored|remember(?:ed)?|kept|keep|have|got|collected)\s+(?:of|about|on)\s+me\b",
        ),
        (
            Command.RECALL_SUMMARY,
            r"\b(?:(?:list|show|read)\s+(?:me\s+)?(?:my|your)\s+memories|my\s+memories[.,:!]?\s+"
            r"(?:list|show|read)\s+(?:them|me))\b",
        ),
        (
            Command.FORGET,
            rf"{_IMPERATIVE}(?:scrap|ditch|bin|toss|unsave|un-save|take out)\s+{_PLEASE}(?:what|"
            r"everything|whatever|the (?:bit|part|stuff|thing))\s+(?:that\s+)?(?:I\s+(?:said|told you|"
            rf"mentioned)\s+)?about\s+(?:my\s+)?{_TOPIC}{_END}",
        ),
        (
            Command.FORGET,
            rf"{_IMPERATIVE}(?:{_ERASE}|take)\s+(?:out\s+)?(?:from|out of)\s+(?:your\s+|the\s+|my\s+)?"
            rf"{_MEMORY_PLACE}\s+(?:my\s+|the\s+)?{_TOPIC}{_END}",
        ),
        (
            Command.FORGET,
            r"(?:^|[,.!?;]\s*|\b(?:please|just|ok|okay|oh)\s+)(?:unsave|un-save|scrap|ditch)\s+"
            r"(?:that|this|it)\s*(?:[.!]|$|,?\s*please\b)",
        ),
        (
            Command.FORGET_THREAD,
            r"\b(?:bin|ditch|toss|nuke|kill)\s+(?:this|that|the|our)\s+(?:whole\s+|entire\s+)?"
            r"(?:thread|conversation|chat|discussion|session)\b",
        ),
        (
            Command.DO_NOT_STORE,
            rf"\b(?:off\s+the\s+books|not\s+for\s+(?:your\s+|the\s+)?{_MEMORY_PLACE}\s*(?=[:,.!]|$)|"
            rf"no\s+{_MEMORY_PLACE}\s*[:,]|(?:don't|do not)\s+(?:keep|save|store)\s+any\s+of\s+"
            r"(?:this|that|it))\b",
        ),
        (
            Command.DO_NOT_MENTION,
            r"\b(?:can|could|would|will)\s+you\s+(?:like\s+|please\s+|just\s+)?(?:never|not)\s+"
            rf"(?:ever\s+)?{_MENTION}\s+{_TOPIC},?\s+(?:again|anymore|any more|ever again)\b",
        ),
        (
            Command.PULL_ONLY,
            r"\bkeep\s+(?:it|this|that|them)(?:\s*,?\s*but)?\s+only\s+(?:if|when)\s+I\s+"
            r"(?:ask|say so|bring it up)\b",
        ),
        (
            Command.REMEMBER_EVERYTHING,
            r"(?<!don't )(?<!do not )(?<!never )(?<!\bI )(?<!\bwe )(?<!\bthey )"
            r"\b(?:hang on to|hang onto|hold on to|hold onto|"
            r"keep hold of)\s+(?:absolutely\s+)?(?:everything|all of it|it all)\b"
            r"(?:\s+(?:I|that I)\s+(?:say|tell you|mention))?",
        ),
        # "hoover up everything I say from now on", "from here on, hang on to every single thing
        # I tell you": all of what the user says, from now on (both said in one sentence).
        (
            Command.REMEMBER_EVERYTHING,
            r"(?<!don't )(?<!do not )(?<!never )(?<!\bI )(?<!\bwe )(?<!\bthey )"
            r"(?<!\bneed to )(?<!\bhave to )(?<!\btry to )"
            r"\b(?:keep|save|store|remember|record|log|note|hang on to|hold on to|hoover up|"
            r"keep a record of)\s+(?:all of it,?\s+)?(?:absolutely\s+)?"
            r"(?:everything|every (?:single )?thing|all)\s+(?:that\s+)?I\s+(?:say|tell you|mention|share)"
            r"\b(?=[^.!?]*\b(?:from (?:now|here|today|this point)(?: on(?:wards)?)?|going forward|"
            r"onwards?)\b)",
        ),
        # "run me through whatever it is you've kept about me", "give me a rundown of everything
        # you've saved about me", "Memory dump on me, please."
        (
            Command.RECALL_SUMMARY,
            r"\b(?:run me through|walk me through|give me a rundown of|lay out for me|read me)\s+"
            r"(?:(?:like|all|the|of)\s+){0,3}(?:what(?:ever)?|everything|all)\s+(?:it is\s+)?"
            r"(?:that\s+)?you(?:'ve| have)?\s+(?:\w+\s+)?(?:saved|stored|kept|got|know|remember(?:ed)?|"
            r"picked up|collected|learned|learnt)(?=\s*(?:(?:about|on) me\b|so far\b|[,.!?;\u2014-]|$))|"
            r"(?:^|[.!?;]\s*)(?:memory dump|recap me)\b|"
            # "run me through what you think you know", "what's in there about me?"
            # (A spoken "you know" is dropped as a filler: "what you think".)
            r"\b(?:run me through|walk me through)\s+what\s+you\s+(?:think|reckon)"
            r"(?:\s+you\s+(?:know|have))?(?:\s+(?:about|on)\s+me)?(?=\s*(?:[.!?,;]|$))|"
            r"\bwhat(?:'s| is)\s+in\s+there\s+(?:about|on)\s+me\b|"
            # "run me through the file you've got on me", "read me my profile".
            r"\b(?:run me through|walk me through|read me|read out|show me|pull up)\s+(?:the|my|your)\s+"
            r"(?:file|profile|dossier|record|notes)(?:\s+(?:that\s+)?you(?:'ve| have)?\s+(?:got|kept|keep|"
            r"have|hold)\s+(?:on|about)\s+me)?\s*(?:[,.!?;]|$)",
        ),
        # "feel free to remember anything I tell you"
        (
            Command.REMEMBER_EVERYTHING,
            rf"(?:{_IMPERATIVE}|\byou(?:'re| are) (?:allowed|welcome|free) to\s+|\byou may\s+)"
            r"(?:remember|save|store|keep|record)\s+(?:anything|whatever)\s+(?:and everything\s+)?"
            r"(?:that\s+)?I\s+(?:say|tell you|mention|share)\b",
        ),
        # "can we go back to talking about the move"
        (
            Command.RESUME_THREAD,
            rf"\b{_RETURN_TO}\s+{_PLEASE}(?:talking|chatting|thinking)\s+(?:about|over)\s+"
            rf"(?:the|our|my|that)\s+{_TOPIC_NOT_A_PLACE}{_SHORT_TOPIC}{_END}",
        ),
        # "get rid of whatever you know about my ex", "purge anything you have on my pills",
        # "throw away what I said about my old job": what is kept, then whom or what about.
        (
            Command.FORGET,
            rf"{_IMPERATIVE}(?:{_ERASE}|toss|bin|ditch|scrap)\s+{_PLEASE}(?:what(?:ever)?|anything|"
            r"everything|all|the (?:stuff|things?|bit|part|info|information|details?))\s+"
            rf"(?:that\s+)?{_YOU_KEEP}(?:about|on|regarding)\s+(?!(?:it|that|this|me)\b)"
            rf"(?:my\s+)?{_TOPIC}{_END}",
        ),
        # "wipe that last thing I said (from your memory)"
        (
            Command.FORGET,
            rf"{_IMPERATIVE}{_ERASE}\s+{_PLEASE}(?:that|the|this)\s+(?:last\s+|other\s+)?"
            r"(?:thing|bit|part|one)\s+(?:(?:that\s+)?I\s+(?:just\s+)?(?:said|told you|mentioned|shared)\b|"
            rf"(?:out\s+of|from|off)\s+(?:your\s+|the\s+)?{_MEMORY_PLACE}\b)",
        ),
        # "avoid the subject of my miscarriage", "avoid talking about my dad" (never "I avoid…")
        (
            Command.DO_NOT_MENTION,
            rf"{_IMPERATIVE}avoid\s+(?:the\s+(?:subject|topic)\s+of|(?:talking|speaking)\s+about|"
            rf"mentioning|bringing up|discussing|any mention of)\s+{_TOPIC}"
            rf"(?:\s+(?:from now on|going forward|again|anymore|any more|in (?:the )?future))?{_END}",
        ),
        # "the topic of money is off limits", "my ex is off-limits from now on"
        (
            Command.DO_NOT_MENTION,
            r"\b(?:the\s+)?(?:topic|subject)\s+of\s+(?P<target>[^,.!?;]+?)\s+(?:is|are)\s+"
            r"off[- ]limits\b",
        ),
        (
            Command.DO_NOT_MENTION,
            r"(?:^|[,.!?;]\s*)(?P<target>(?:my|our)\b[^,.!?;]{0,40}?)\s+(?:is|are)\s+off[- ]limits\s+"
            r"(?:from now on|going forward|for you|in (?:our|these|any) (?:chats|conversations|talks))",
        ),
        # "keep my health info to yourself unless I bring it up"
        (
            Command.PULL_ONLY,
            r"\bkeep\s+(?P<target>(?:my|the|our)\b[^,.!?;]+?)\s+to\s+yourself\s+unless\s+I\s+"
            r"(?:ask|bring (?:it|them) up|mention (?:it|them)|say so)\b",
        ),
        # "stop noting how I'm feeling", "don't keep track of my moods": the tone kept of them
        (
            Command.FORGET_TONE,
            rf"(?:{_IMPERATIVE}(?:stop|quit)\s+(?:noting|tracking|keeping track of|keeping tabs on|"
            rf"logging|recording|remembering)|\b{_DONT}\s+(?:keep track of|keep tabs on|track|note|"
            r"log|record|remember))\s+(?:how I(?:'m| am)?\s+feel(?:ing)?|my\s+(?:moods?|feelings|"
            r"emotions|emotional state))\b",
        ),
    ),
)
_COMPILED = tuple((command, re.compile(pattern, re.I)) for command, pattern in _COMMAND_PATTERNS)
# Each pattern with the words it cannot match without: most clauses hold none, and a
# pattern tried at every position of one costs more than all the tests together.
_SCREEN = WordScreen([required_words(pattern) for _, pattern in _COMPILED])


def _candidates(text: str) -> Iterator[tuple[Command, re.Pattern[str]]]:
    """The command patterns that may match `text`, in their order."""
    if not text.isascii():
        # Case folding beyond ASCII ("ſ" matches "s") is outside what the words test.
        yield from _COMPILED
        return
    for compiled, passes in zip(_COMPILED, _SCREEN.passing(text.lower()), strict=True):
        if passes:
            yield compiled


_TARGET_ABOUT = re.compile(
    r"\b(?:the stuff|the thing|everything|what I said)\s+about\s+"
    rf"(?:my\s+)?{_TOPIC}{_END}",
    re.I,
)
_TOLD_ABOUT = re.compile(
    r"\b(?:told you|telling you|said|saying|mentioned|mentioning|shared|sharing|thing|stuff|bit|part)"
    r"\s+about\s+(.+)$",
    re.I,
)
_DEICTIC = frozenset({"this", "that", "it", "those", "these", "me", ""})
_TARGET_TRIM = re.compile(r"^(?:about\s+)?(?:my|the|our|that|this)\s+|\s+(?:thing|stuff)$", re.I)


# "my name's Oksana, not Roxana, people always get that wrong", "many people confuse this":
# the mix-up is other people's, and nothing the assistant heard is put right.
_OTHERS_MIX_UP = re.compile(
    r"\b(?:people|everyone|everybody|most people|folks|they)\s+(?:always\s+|often\s+|usually\s+|"
    r"keep\s+|just\s+)?(?:get (?:it|that|this|them) wrong|gets? (?:it|that|this) wrong|confuse|"
    r"confuses|mix (?:it|them|that) up|assume|think|mishear|call me)\b",
    re.I,
)
_TO_THE_ASSISTANT = re.compile(r"\byou(?:'ve|'re|r)?\b", re.I)


def others_mix_it_up(text: str) -> bool:
    """Whether the turn puts a mix-up down to other people and says nothing to the assistant."""
    return bool(_OTHERS_MIX_UP.search(text)) and not speaks_to_the_assistant(text)


def speaks_to_the_assistant(text: str) -> bool:
    """Whether the words address the assistant ("you", "you've", "you're", a transcript's "ur")."""
    return _TO_THE_ASSISTANT.search(text) is not None


@dataclass(frozen=True)
class CommandMatch:
    """A detected command, the topic it names, and the correction pair if any."""

    command: Command | None
    target: str | None
    correction: Correction | None
    fact_text: str


def detect_command(text: str, means_otherwise: MeaningTest | None = None) -> CommandMatch:
    """Find the first memory-control command of a normalised turn, or a correction
    (`means_otherwise` as in `detect_correction`)."""
    correction, fact_text = detect_correction(text, means_otherwise)
    if correction is not None and names_values(correction) and not others_mix_it_up(text):
        return CommandMatch(Command.CORRECTION, correction.meant, correction, fact_text)
    # A polite wrapper ("would you mind erasing …") is heard as the request it wraps; the
    # facts are still read from the words as said.
    plain = plain_request(text)
    for command, pattern in _candidates(plain):
        match = pattern.search(plain)
        if match and not _reported(plain, match.start()):
            if command in (Command.FORGET, Command.RESUME_THREAD) and _DEVICE_THING.search(plain):
                # "delete that text to Jake", "resume the audiobook", "stop the timer and reset
                # it": a device's things, not the memory or a talk.
                return CommandMatch(None, None, None, text)
            if command is Command.FORGET_EVERYTHING and _names_this_talk(match.group(), plain):
                return CommandMatch(Command.FORGET_THREAD, None, None, text)
            if command is Command.DO_NOT_STORE and _kept_already(plain, match):
                # "that thing I said about the money, get rid of it, don't keep it": what was
                # said is to go, not what comes next.
                return CommandMatch(Command.FORGET, _forgotten_topic(plain, match), None, text)
            target = _target(command, match, plain)
            if (
                command is Command.FORGET
                and (target or "").lower() in _POINTED_AT
                and any(
                    not re.match(r"\s+with\b", plain[talk.end() :])
                    for talk in _THIS_TALK.finditer(plain)
                )
                and not _ABOUT_ME.search(plain)
            ):
                # "can you just forget this one, this whole thread": what is pointed at is the
                # talk the turn names.
                return CommandMatch(Command.FORGET_THREAD, None, None, text)
            if command is Command.PULL_ONLY and (target or "").lower() in _MEMORY_AS_A_WHOLE:
                # "Memory: on request only.": the memory itself, not one topic of it.
                return CommandMatch(Command.RECALL_ONLY_IF_ASKED, None, None, text)
            return CommandMatch(command, target, None, text)
    return CommandMatch(None, None, None, text)


# What a phone or a speaker holds, right after the verb that erases, resets or resumes it.
_DEVICE_THING = re.compile(
    r"\b(?:delete|erase|remove|clear|reset|restart|resume|continue|play|stop|cancel|pause)\s+"
    r"(?:(?:the|that|this|my|last|next|a)\s+){0,2}(?:[\w-]+\s+)?"
    rf"(?:{DEVICE_ITEMS}|pictures?|apps?|stopwatch|countdown)\b"
    # "delete the photos thing I told you about": what was told about them.
    r"(?!\s+(?:thing|stuff|bit|story|business|I\b|you\b))",
    re.I,
)


# A refusal to keep "it" or "that" after the user points back at what they said or asks it
# erased: a forget of what was said, not a rule for what comes next ("don't keep this").
_POINTS_BACK = re.compile(r"\b(?:it|that)\b", re.I)
_SAID_BEFORE = re.compile(
    r"\b(?:I\s+(?:just\s+)?(?:said|mentioned|told you)|get rid of|remove|bin|delete|erase|wipe|"
    r"scrap|ditch|take (?:it|that) out)\b",
    re.I,
)


def _kept_already(text: str, match: re.Match[str]) -> bool:
    return (
        _POINTS_BACK.search(match.group()) is not None
        and _SAID_BEFORE.search(text[: match.start()]) is not None
    )


def _forgotten_topic(text: str, match: re.Match[str]) -> str | None:
    """The topic of a forget said as a refusal to keep: a forget's own reading where one
    matches, else what the user says they talked about ("that last thing I said about the
    money stuff" -> "money")."""
    for command, pattern in _candidates(text):
        forget = pattern.search(text) if command is Command.FORGET else None
        if forget is not None and (target := _target(command, forget, text)):
            return target
    about = _TOLD_ABOUT.search(text[: match.start()])
    if about is None:
        return None
    return _trimmed_topic(_TOPIC_END.split(about.group(1), maxsplit=1)[0])


_TOPIC_END = re.compile(
    r"[,.!?;]|\s+(?:just|so|please|and|but|get rid|bin|remove|delete|erase|wipe)\b", re.I
)


# What names the whole memory where a topic would stand ("Memories: on request only").
_MEMORY_AS_A_WHOLE = frozenset(
    "memory memories recall everything anything all global general".split()
    + ["my memory", "my memories", "all memories", "all of it", "all of that"]
)


# "this conversation about my neighbours, please delete all of it": "all of it" is the
# conversation just named, not everything kept about the user.
_THIS_TALK = re.compile(
    r"\b(?:this|that|our|today's)\s+(?:whole\s+|entire\s+)?(?:conversation|convo|chat|thread|"
    r"talk|session|discussion)\b",
    re.I,
)
_POINTED_AT = frozenset(["", "this", "that", "it", "this one", "that one"])
_ABOUT_ME = re.compile(r"\b(?:about me|on me|my (?:data|profile|memories|info))\b", re.I)


def _names_this_talk(matched: str, text: str) -> bool:
    return (
        re.search(r"\b(?:all of it|it all)\b", matched, re.I) is not None
        and _THIS_TALK.search(text) is not None
        and _ABOUT_ME.search(text) is None
    )


# "my sister told me to just forget about him", "my therapist says I should stop bringing up
# my ex": someone else's words, reported, right before what would be a command.
_REPORTING = re.compile(
    r"\b(?:told|tells|telling|tell|asked|asks|asking|wants|wanted|keeps? telling|kept telling)\s+"
    r"(?:me|us)\s+to(?:\s+\w+)?\s*$|\b(?:says|said|saying|thinks|thought)\s+(?:that\s+)?(?:I|we)\s+"
    r"(?:should|need to|have to|must)(?:\s+\w+)?\s*$|"
    # "this guy said you should stop bringing up your ex", "the minister said off the record":
    # advice or words of someone other than the user.
    r"(?<!\bI )\b(?:says|said|thinks|thought|reckons)\s+(?:that\s+)?(?:(?:you|people|one)\s+"
    r"(?:should|shouldn't|need to|have to|must)(?:\s+\w+)?\s*)?$|"
    # "I wish I could just forget this whole week": a wish, not a request.
    r"\b(?:wish|if only)\s+(?:I|we)\s+(?:could|can)(?:\s+just)?\s*$|"
    # "they won't stop talking about it": what others do, not what the user asks.
    r"\b(?:he|she|they|people|everyone|everybody)\s+(?:won't|wouldn't|can't|couldn't|never|don't|"
    r"doesn't|didn't)\s*$",
    re.I,
)


def _reported(text: str, start: int) -> bool:
    sentence_start = max(text.rfind(mark, 0, start) for mark in ".;!?") + 1
    return bool(_REPORTING.search(text[sentence_start:start]))


def carries_own_content(text: str) -> bool:
    """True when a turn says something besides its command ("off the record, my cousin is in
    rehab"): a command like DO_NOT_STORE then covers this turn, not what was said before."""
    clauses = split_clauses(normalize(text))
    return any(
        not is_command_clause(c.text) and len(re.findall(r"[A-Za-z']+", c.text)) >= 3
        for c in clauses
    )


def is_command_clause(clause_text: str) -> bool:
    """True when the clause itself carries a command (so it is not mined for facts)."""
    plain = plain_request(clause_text)
    return any(pattern.search(plain) for _, pattern in _candidates(plain))


# RECALL_ONLY_IF_ASKED said of resuming only ("don't resume automatically", "only resume
# if I ask") names this target: it holds back auto-resume, not recall.
RESUME_ONLY_TARGET = "resume"
_ABOUT_RESUMING = re.compile(
    r"\b(?:auto-?resum\w*|resum\w*|continu\w*|pick(?:ing)?\s+(?:things\s+|back\s+)?up|left off)\b",
    re.IGNORECASE,
)


def _target(command: Command, match: re.Match[str], text: str) -> str | None:
    if command is Command.FORGET_EVERYTHING:
        return None  # everything of the user: no topic
    if command is Command.RECALL_ONLY_IF_ASKED:
        said = re.split(r"[.!?]", text[match.start() :], maxsplit=1)[0]
        return RESUME_ONLY_TARGET if _ABOUT_RESUMING.search(said) else None
    # A pattern of several wordings names its topic "target", "target2", ... (one per wording).
    target = next((v for k, v in match.groupdict().items() if k.startswith("target") and v), None)
    if not target or target.strip().lower() in _DEICTIC:
        about = _TARGET_ABOUT.search(text)
        target = about.group("target") if about else None
    if not target:
        return None
    # "I regret telling you about the loan": the topic is what the telling was about.
    told_about = _TOLD_ABOUT.search(target)
    if told_about:
        target = told_about.group(1)
    return _trimmed_topic(target)


def _trimmed_topic(words: str) -> str | None:
    """A topic without "my", "the", a trailing "thing" or "stuff" and edge punctuation."""
    for _ in range(2):
        words = _TARGET_TRIM.sub("", words.strip())
    return words.strip(" ,.") or None


# A sign that the turn corrects what was heard; without one, a pair must sound alike.
_CORRECTION_TRIGGER = re.compile(
    r"^(?:(?:ugh|argh|um|uh|hmm+|wait|sorry)[ ,!]+)*(?:no|nope|nah)\b(?!\s+(?:worries|problem|thanks|thank you|way|idea|clue|rush|pressure|"
    r"big deal|doubt|offen[cs]e|kidding|more|need|matter|longer)\b)|^(?:wrong|correction|sorry)\b|"
    # Not "like I said" or "as I said": words said before, recalled, not put right.
    r"(?<!\blike )(?<!\bas )\b(?:I said|I did say|I meant|I mean|misheard|mis-heard|you heard|"
    r"heard me wrong|not what I said|"
    r"I didn't say|I did not say|I don't say|I do not say|spelled|spelt|spell it)\b|^not\s+\w|"
    # A word spelled out ("Z-H-O-U") or a letter named ("Karl, with a K"): how it is written.
    r"\b[A-Za-z](?:-[A-Za-z]){2,}\b|\bwith an?\s+[A-Z]\b|"
    r"\b(?:that's|that is|that was|it's|it is)\s+not\s+(?:right|correct|what I said)\b|"
    # "please correct that.", "small correction, ...", "quick fix: ...", "to fix something from
    # before".
    r"\b(?:please\s+)?correct\s+(?:that|this|it)\s*(?:[.!]|$)|\bplease\s+correct\s*(?:[.!]|$)|"
    r"\b(?:quick|small|little|one)\s+(?:correction\b|fix\s*[,:;—])|"
    r"\bfix\s+something\s+(?:from|you)\b|"
    # "you keep mixing them up", "you've confused the two": the assistant took one word for
    # the other just named ("I keep mixing them up" is the user's own slip, no correction).
    r"\byou\b(?:'ve|'re|\s+\w+){0,2}\s+(?:mix|mixing|mixed)\s+(?:them|those|these|the two|it)\s+up\b|"
    r"\byou\b(?:'ve|'re|\s+\w+){0,2}\s+confus(?:e|ed|ing)\s+(?:them|those|these|the two)\b|"
    r"\b(?:got|get|gets|getting|heard|wrote|written|typed|spelled|spelt|understood|transcribed|"
    r"came through|"
    r"came out|that's|that is|you're|you are)\s+(?:(?:it|that|this|me|my \w+|the \w+)\s+)?"
    r"(?:all\s+)?wrong\b",
    re.I,
)


# Words no misheard or meant value holds: a clause's own subject and verb ("it doesn't mean
# you're not talented"), a reply's opener ("Nope, not a new game"), a connective.
_NOT_IN_A_VALUE = frozenset(
    """it's you're they're we're he's she's that's there's doesn't don't isn't aren't can can't
    nope nah yeah yep yes okay ok well oh hey hi sorry thanks unfortunately although though
    also just anyway""".split()
)
# Words that say nothing alone: a value made only of these is no value ("and", "not a");
# pronouns can be ("You wrote 'there'. Should be 'their'.").
_FUNCTION_WORDS = frozenset(
    """a an the and or but so to of in on at for with from by is are was were be not no""".split()
)


def is_a_value(span: str) -> bool:
    """Whether a correction's heard or meant span can be a value said: at least one word that
    says something and no word of a clause's frame ("Nope", "it doesn't mean you're")."""
    words = [w.strip(".,!?;:'\"").lower() for w in span.split()]
    words = [w for w in words if w]
    return (
        bool(words)
        and not any(w in _NOT_IN_A_VALUE for w in words)
        and not all(w in _FUNCTION_WORDS for w in words)
    )


def names_values(correction: Correction) -> bool:
    """Whether both words of a correction pair can be values said (`is_a_value`)."""
    return is_a_value(correction.heard) and is_a_value(correction.meant)


# "when I say the loft, I mean the studio", "By the big smoke I mean London": what a word of
# the user's stands for (kept as their usage), not a slip to correct.
_STANDS_FOR = re.compile(
    r"(?:\bwhen(?:ever)?\s+I\s+say|(?:^|[.!?]\s+)by)\s+[^.;:!?]{1,60}?,?\s+I\s+(?:always\s+)?mean\b",
    re.I,
)


def says_what_a_word_stands_for(text: str) -> bool:
    """Whether the turn tells what a word of the user's stands for ("when I say X, I mean Y")."""
    return bool(_STANDS_FOR.search(text))


def says_it_corrects(text: str) -> bool:
    """Whether a turn's words say it corrects what was heard ("no", "I said", "you wrote it
    wrong", a word spelled out), beyond drawing a contrast."""
    return bool(_CORRECTION_TRIGGER.search(text))


# How a speaker says a word again in its right form ("or rather", "what am I saying"); the
# self-correction sign below also hears "I mean" and "correction".
_RESTATING = r"what\s+am\s+I\s+saying|or\s+rather"
# Words a speaker takes back what they or the assistant just said with ("six kilometres, no
# wait, six miles", "oh what am I saying, Oxford", "you wrote 'Lisa' ... it's 'Liesl'", "you've
# got Bartek down as my uncle").
_TAKES_A_WORD_BACK = re.compile(
    rf"\bno,?\s+wait\b|\bwait,?\s+no\b|\b(?:{_RESTATING})\b|\bscratch that,|"
    r"\byou(?:'ve| have)?\s+(?:wrote|write|written|typed|put|saved|read back|repeated)\b|"
    r"\bdown as\b|\bcame out as\b|\b(?:it|that) says\b[^.?!]*\bbut\b|"
    r"\byou\s+said\b[^.?!]*[.?!,]?\s*(?:but\s+)?I(?:'d|\s+had)?\s+(?:said|told you)\b|"
    # "You understand 'fourteen' but I say 'forty'", "you had it as Kowalski", "it got saved
    # as seventy-five", "you've got the 4th down".
    r"\byou\s+(?:understand|understood|hear|heard)\b[^.?!]*\bbut\s+I\s+(?:say|said)\b|"
    r"\b(?:you\s+(?:had|have|'ve\s+got|got)\s+(?:it|that|me|him|her|them)|got\s+saved|"
    r"(?:was|got)\s+(?:written|saved|put)\s+down)\s+as\b|"
    r"\byou(?:'ve|\s+have)\s+got\s+[\w' ]{1,30}?\s+down\b(?!\s+as)|"
    r"\b(?:it's|its|it is|that's)\s+actually\b|\bno,?\s+(?:it's|its|it is)\b|"
    # "That's 'Nguyen', not 'Win'": both words quoted, as words said or written.
    r"['‘\"“][^'’\"”]{1,30}['’\"”],?\s+not\s+['‘\"“]",
    re.I,
)


def takes_a_word_back(text: str) -> bool:
    """Whether a turn takes back a word it or the assistant said ("no wait", "or rather", "you
    wrote …", "you've got … down as", both words quoted): with a pair the correction model
    finds, a correction."""
    return _TAKES_A_WORD_BACK.search(text) is not None


# Misheard words sound alike (Cairns/Cannes 0.67, Bern/Berlin 0.8); contrasts such as
# kilos/pounds or tea/coffee fall well below.
_SOUNDS_ALIKE = 0.55
_INTERJECTIONS = (
    r"(?:(?:no|nope|nah|ugh|argh|sorry|wait|hang on|hold on|oops|oh|uh|um|wrong|correction)\b"
    r"[ ,!]*)*"
)
_COPULA = (
    r"(?:it's|its|it is|is|that's|that is|I'm|I am|he's|she's|he is|she is|they're|we're|"
    r"name's|name is|it was|was|that was)"
)
_NAME_IS = r"(?:(?:the|his|her|their|your)\s+|my \w+'s\s+)?name(?:'s|\s+is)\b"
# "it's X, not Y" / "is not Y, is X" name a thing, not the speaker ("I'm vegan, not vegetarian").
_IMPERSONAL_LEAD = re.compile(
    rf"^(?:(?:but|so|and|no|nope|yeah|okay|ok)[ ,]+)*(?:it's|its|it is|is|that's|that is|"
    rf"it should be|{_NAME_IS})",
    re.I,
)
# "not Y, X" at the start of a sentence: "not Austin, Boston", "ugh, not ducks, DOCS".
_NOT_Y_X = re.compile(
    rf"(?:^|[.;!?]\s*){_INTERJECTIONS}not\s+(?P<heard>[^,.;!?]+?)(?:,\s*|\s+but\s+)(?P<meant>[^,.;!?]+)",
    re.I,
)
# "not eighty grams eighteen grams": no comma, so the pair must sound alike.
_NOT_Y_X_RUN_ON = re.compile(rf"(?:^|[.;!?]\s*){_INTERJECTIONS}not\s+(?P<rest>[^,.;!?]+)", re.I)
# "is not Lyon, is Lille", "it isn't Tom, it's Tim", "I'm not a vegetarian, I'm a veterinarian",
# "I didn't say Bern, I said Berlin"
_PARALLEL = re.compile(
    rf"\b(?P<lead>{_COPULA}\s+not|(?:it|that)\s+(?:isn't|wasn't)|isn't|I\s+(?:didn't|did not|never|"
    rf"don't|do not)\s+say)\s+(?P<heard>[^,.;!?]+?),?\s+(?:{_COPULA}|I said|I say|I meant|but)\s+"
    rf"(?P<meant>[^,.;!?]+)",
    re.I,
)
# "you've written Brown there, but it's Braun"
_YOU_WROTE_BUT = re.compile(
    # "it says I'm gluten intolerant but I said lactose intolerant": the summary read back.
    r"\b(?:you(?:'ve| have)?\s+|(?=it\s+says\b))(?P<verb>it\s+says|written|wrote|write|typed|"
    r"put(?:\s+down)?|spelled|spelt|heard|got|"
    r"saved|noted|understood|misheard|said back|read back|(?:keep|kept)\s+(?:saying|writing|putting)|"
    # "you said I live in Bern, but no, it is Basel": only with a "but" (bare, "you said I'm X,
    # I'm Y" is _YOU_SAID_PARALLEL's).
    r"said(?=[^,.;!?]+,?\s+but\b))(?:\s+down)?"
    r"\s+(?!(?:it\s+|me\s+|that\s+)?(?:all\s+)?wrong\b)(?P<heard>[^,.;!?]+?)"
    r"(?:\s+(?:there|here|down|in there))?\s*,?\s*"
    # "you wrote that I live in Dallas, that's not right at all, it's Dublin"
    r"(?P<bridge>(?:but|(?:and\s+)?(?:that's|that is)\s+(?:not right|not correct|wrong)"
    r"(?:\s+at all)?)[\s,]+(?:(?:no|nope|actually)[\s,]+)?(?:it's|its|it is|is|it should be|"
    r"should be|I said|I meant|I'm|I am|I live in|I'm from|I am from|I come from|"
    r"my \w+(?:'s| is)|(?<=no, )|(?<=no )|(?<=nope, ))|I said|"
    r"I meant)\s*(?P<meant>[^,.;!?]+)",
    re.I,
)
_STATEMENT_FRAME = re.compile(
    r"\b(?:I'm|I am|I live in|I'm from|I am from|I come from|my \w+(?:'s| is))\s*$", re.I
)
# After a bare "you said … but", only "no", "it's" or "I said" make the rest a correction.
_SAID_BACK_SIGN = re.compile(
    r"\b(?:no|nope|actually|it's|its|it is|it should be|I said|I meant)\b", re.I
)
# "that I'm a dentist", "I live in Bern": the frame the assistant's version was said in.
_HEARD_FRAME = re.compile(
    r"^(?:that\s+)?(?:(?:I'm|I am|I\s+\w+(?:\s+(?:in|at|as|for|from|on|to))?|"
    r"my \w+(?:'s| is)(?:\s+(?:called|named))?|"
    r"it's|it is)\s+)?"
    r"(?:(?:my|your|a|an|the)\s+)?",
    re.I,
)
# "you keep calling my cat Mishka 'Misha', and it's Mishka", "you keep calling me Kate, it's
# Cate": the name heard again and again, then the one meant.
_YOU_KEEP_CALLING = re.compile(
    r"\byou(?:'ve| have)?\s+(?:keep|kept|been|always)\s+(?:calling|writing|spelling|saying|putting)\s+"
    r"(?P<who>my\s+[\w-]+(?:\s+[\w-]+)?|me|him|her|it|them)\s+['\"‘’“”]?(?P<heard>[\w'-]+?)['\"‘’“”]?"
    r"\s*,?\s*(?:(?:and|but)\s+)?(?:it's|its|it is|he's|she's|his name is|her name is|the name is|"
    r"my name is|I'm)\s+(?P<meant>[\w'-]+)",
    re.I,
)
_NEGATED_VERB = re.compile(
    r"\b(?:do|does|did|is|are|was|were|am|be|been|have|has|had|can|could|will|would|should|must|"
    r"may|might|shall|need|or|if|whether|why)$",
    re.I,
)
# "X, not Y": what follows "not" up to the clause end.
_NOT_HEARD = re.compile(r",?\s+not\s+(?P<region>[^,.;!?]+)", re.I)
# Letters spelled out; a spoken "U" reaches us as "you".
_SPELLED = re.compile(r"\b(?:(?:[A-Za-z]|you)-){2,}(?:[A-Za-z]|you)\b")
_LEAD_IN = re.compile(
    rf"^(?:(?:no|nope|nah|sorry|wrong|but|and|so|okay|ok)[ ,]+)*(?:you misheard(?: me)?[ ,]+)?"
    r"(?:(?:I said|I did say|I meant|I mean|I asked(?: for| in| about)?|it's spelled|it should be|"
    r"it's|it is|its|is|that's|that is|I'm|"
    # A word boundary after each: "Isabel" and "Itsuki" open with no "is" or "its".
    rf"I am|I live in|{_NAME_IS}|my \w+(?:'s| is)(?: name is)?)\b\s*)*",
    re.I,
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_INTERJECTION = re.compile(r"^(?:(?:no|nope|nah|sorry|wrong|correction)\b[ ,!.]*)+", re.I)
# Words that start the next clause, so they end a misheard span ("citalopram I take ...").
_SPAN_STOP = frozenset(
    "i i'm i've i'd i'll my it's its that's haha lol and but because so which please thanks "
    "ok okay you we he she they".split()
)
_MAX_SPAN_WORDS = 3


# "Lisbon. Not Lisburn.": a short sentence and the misheard word as a sentence of its own are
# read as "Lisbon, not Lisburn" (the pair must still sound alike, or come with a sign).
_SHORT_THEN_NOT = re.compile(
    r"(?:^|(?<=[.;!?]\s))(?P<said>(?:\S+\s+){0,2}\S+?)[.;!]\s+not\s+", re.I
)


# "Not Tuesday. Thursday.": the misheard word first, then the meant one as a short sentence
# (which may be followed by what it is: "Not Greg. Craig. My brother.").
_NOT_THEN_SHORT = re.compile(
    r"^not\s+(?P<heard>(?:[^\s,.;!?]+\s+){0,2}?[^\s,.;!?]+)[.;!]\s+"
    r"(?P<said>(?:[^\s,.;!?]+\s+){0,2}?[^\s,.;!?]+)(?P<end>[.!]?$|[.!](?=\s))",
    re.I,
)


def _not_then_short(found: re.Match[str]) -> str:
    """The "Not X. Y." shape as "Y, not X": when more follows, only a name or a number can be Y
    ("not a musicals person. at all. got dragged…" corrects nothing)."""
    said, end = found.group("said"), found.group("end")
    runs_on = bool(end.strip()) and found.end() < len(found.string)
    if runs_on and not (said[:1].isupper() or said[:1].isdigit()):
        return found.group(0)
    return f"{said}, not {found.group('heard')}{end}"


# "I drink oat milk. Not goat.": a sentence of its own that is only "not" and the misheard
# word follows what it corrects, however long that was.
_SENTENCE_THEN_BARE_NOT = re.compile(
    r"(?P<said>[^.;!?]+)[.;!]\s+not\s+(?P<heard>(?:[^\s,.;!?]+\s+){0,2}?[^\s,.;!?]+)(?=\s*(?:[.;!?]|$))",
    re.I,
)


def _joined_bare_not(found: re.Match[str]) -> str:
    """The sentence and its bare "not Y" as one "X, not Y", when Y sounds like a word of it."""
    said, heard = found.group("said"), found.group("heard")
    if max((_likeness(heard, word) for word in said.split()), default=0.0) < _SOUNDS_ALIKE_UNSIGNED:
        return found.group(0)
    return f"{said}, not {heard}"


@dataclass(frozen=True)
class _Pair:
    heard: str
    meant: str
    fact_text: str


# Whether two words that sound alike mean different things ("dietitian"/"diabetic" do;
# "vegan"/"vegetarian" do not): the sign of a mishearing when no word says "I said".
MeaningTest = Callable[[str, str], bool]
# How alike a pair must sound for its difference in meaning to make it a correction.
_SOUNDS_ALIKE_UNSIGNED = 0.5


def detect_correction(
    text: str, means_otherwise: MeaningTest | None = None
) -> tuple[Correction | None, str]:
    """Return the heard/meant pair of a correction and the turn with the misheard part removed.

    Without a sign in the words ("no", "I said", "you got it wrong") or a bare pair, "X, not Y"
    is read as a plain negation ("I'm vegan, not vegetarian"). Given `means_otherwise`, such
    a pair is a correction too when the two sound alike and it says they mean different
    things ("I'm a dietitian, not diabetic")."""
    # A dash ("Kiran, not Karen - Kiran's my flatmate") ends a clause as a comma does.
    dashed = re.sub(r"\s+-\s+", ", ", _SPELLED.sub("", text))
    # "Dr. Paz, not Dr. Pass": a title's full stop ends no sentence.
    dashed = re.sub(r"\b(Dr|Mr|Mrs|Ms|Prof|St)\.(?=\s)", r"\1", dashed)
    cleaned = _SHORT_THEN_NOT.sub(r"\g<said>, not ", re.sub(r",\s*,", ",", dashed))
    cleaned = _NOT_THEN_SHORT.sub(_not_then_short, cleaned)
    cleaned = _SENTENCE_THEN_BARE_NOT.sub(_joined_bare_not, cleaned)
    triggered = bool(_CORRECTION_TRIGGER.search(text))
    found = _pair(cleaned, triggered)
    if found is None and means_otherwise is not None and not triggered:
        unsigned = _pair(cleaned, True)
        if unsigned is not None and _sounds_alike_means_otherwise(unsigned, means_otherwise):
            found = unsigned
    if found is None:
        return None, text
    fact_text = _INTERJECTION.sub("", found.fact_text.strip())
    # "its not herring its hearing I said I wear a hearing aid": "its hearing" only says the
    # meant word again; the statement is what follows.
    restated = re.match(
        rf"^(?:it's|its|it is|that's|that is)\s+{re.escape(found.meant)}\b[\s,.;:!-]*(?=\S)",
        fact_text,
        re.I,
    )
    # "it's cashews I'm allergic to": a cleft says the word as part of the statement.
    if restated and not CLEFT.match(fact_text):
        fact_text = fact_text[restated.end() :]
    return Correction(heard=found.heard, meant=found.meant), fact_text


def _pair(cleaned: str, triggered: bool) -> _Pair | None:
    """The heard/meant pair of a cleaned turn, its words trimmed to where they differ."""
    pair = (
        _heard_as(cleaned)
        or _you_wrote_but(cleaned)
        or _you_wrote_then_said(cleaned)
        or _you_said_parallel(cleaned)
        or _you_keep_calling(cleaned)
        or _not_heard_then_meant(cleaned)
        or _unsaid_then_said(cleaned)
        or _parallel_copulas(cleaned, triggered)
        or _said_then_meant(cleaned)
        or _not_heard_then_meant_run_on(cleaned)
        or _self_corrected(cleaned)
        or _meant_then_heard(cleaned, triggered)
    )
    if pair is None:
        return None
    heard, meant = _trim_shared_words(_unquoted(pair.heard), _unquoted(pair.meant))
    heard, meant = _without_frame_words(heard), _without_frame_words(meant)
    # "vegan, not from Vegas", "in Hanoi" / "Da Nang": the preposition came with the heard
    # words, not with the meant ones.
    if _LEADING_PREPOSITION.match(heard) and not _LEADING_PREPOSITION.match(meant):
        heard = _LEADING_PREPOSITION.sub("", heard)
    # "'buy more limes'": a quote mark the span cut through; "a sous-chef": the article.
    heard, meant = (_INDEFINITE.sub("", w.strip(_QUOTES + " ")) for w in (heard, meant))
    if not heard or not meant or heard.lower() == meant.lower() or one_word_inflected(heard, meant):
        return None
    return _Pair(heard, meant, pair.fact_text)


# Words of the sentence a span can catch at its edges and no value starts or ends with: "wait
# I meant pounds", "its paprika", "is pepper", "iraq my family…", "it wrong: my wife is nurse".
_FRAME_LEAD = re.compile(
    r"^(?:(?:wait|so|I|I'd|meant|mean|said|say|its|it's|is|was|it|wrong:?|my\s+\w+\s+is|"
    rf"(?:{TITLE_WORDS})\.?)\s+)+",
    re.I,
)
_FRAME_TAIL = re.compile(r"(?:\s+(?:my|I|I'm|is|its|it's|was|the|a|with))+$", re.I)


def _without_frame_words(span: str) -> str:
    """A span without the frame words at its edges, unless nothing else is left."""
    trimmed = _FRAME_TAIL.sub("", _FRAME_LEAD.sub("", span.strip()))
    return trimmed if trimmed.strip() else span


_IRREGULAR_PLURALS = {"person": "people", "man": "men", "woman": "women", "child": "children"}


def one_word_inflected(heard: str, meant: str) -> bool:
    """ "not a cat person, sorry cat people": a word and its own irregular plural are no slip."""
    heard_words, meant_words = heard.lower().split(), meant.lower().split()
    if len(heard_words) != len(meant_words) or heard_words[:-1] != meant_words[:-1]:
        return False
    one, other = sorted((heard_words[-1], meant_words[-1]), key=len)
    # ("the blues" / "blue" may well be a slip: only a plural made otherwise tells.)
    return _IRREGULAR_PLURALS.get(one) == other or _IRREGULAR_PLURALS.get(other) == one


_LEADING_PREPOSITION = re.compile(r"^(?:from|in|at|to|of|on|for|with)\s+", re.I)
_INDEFINITE = re.compile(r"^(?:a|an)\s+(?=\S)", re.I)
_QUOTES = "'\"‘’“”"


def _unquoted(span: str) -> str:
    """ "'Kim'" -> "Kim": quote marks say a word was quoted, not what was said."""
    stripped = span.strip()
    if len(stripped) > 2 and stripped[0] in _QUOTES and stripped[-1] in _QUOTES:
        return stripped[1:-1].strip()
    return stripped.strip('"“”')


# Words a slip is never heard from: "use grams not cups" contrasts grams with cups, however
# "use" sounds; "I'm not moving" negates the verb.
_LIGHT_WORDS = frozenset(
    """use get have make do go take give put want need like let keep see say tell know think
    moving going doing using having getting making""".split()
)


def _sounds_alike_means_otherwise(pair: _Pair, means_otherwise: MeaningTest) -> bool:
    one_word = " " not in pair.heard and " " not in pair.meant
    # A verb's "-ing" form is a state denied ("it's not happening"), not a word misheard.
    light = any(
        word.lower() in _LIGHT_WORDS or (word.islower() and word.endswith("ing"))
        for word in (pair.meant, pair.heard)
    )
    alike = _likeness(pair.heard, pair.meant) >= _SOUNDS_ALIKE_UNSIGNED
    return one_word and not light and alike and means_otherwise(pair.heard, pair.meant)


# "I said yoga ... it came out as yogurt", "I said oat milk ... and you put goat milk": what
# the recogniser made of a word the turn said before.
_CAME_OUT_AS = re.compile(
    r"\b(?:came out as|came through as|turned into|showed up as|"
    # What the assistant did, not what it is asked to do ("can you put something together").
    r"(?<!can )(?<!could )(?<!would )(?<!will )(?<!to )(?<!please )you (?:put|wrote|typed|heard|"
    r"put down|came back with|keep (?:writing|typing|spelling|putting))(?: something about)?)\s+"
    r"(?:a |an |the |some )?"
    r"(?P<heard>[\w'-]+(?:\s+[\w'-]+)?)",
    re.I,
)
_HEARD_AS_ALIKE = 0.6
# Words said around the meant one that are never it ("yogurt" sounds like "you" too).
_NOT_MEANT = frozenset(
    "you your yours the this that these those what with about and but for was were".split()
)


def _heard_as(text: str) -> _Pair | None:
    found = _CAME_OUT_AS.search(text)
    if not found:
        return None
    heard_words = found.group("heard").split()
    said = [w.strip(".,!?;:") for w in text[: found.start()].split()]
    best: tuple[float, str, str] | None = None
    # The heard word against every word said before it (a two-word span trims its shared word).
    for size in range(1, len(heard_words) + 1):
        heard = " ".join(heard_words[:size])
        for start in range(len(said) - size + 1):
            meant = " ".join(said[start : start + size])
            if (
                meant.lower() == heard.lower()
                or min(len(meant), len(heard)) < 3
                or any(w.lower() in _NOT_MEANT for w in meant.split())
            ):
                continue
            score = _likeness(heard, meant)
            if score >= _HEARD_AS_ALIKE and (best is None or score > best[0]):
                best = (score, heard, meant)
    if best is None:
        return None
    return _Pair(best[1], best[2], text)


def _you_wrote_but(text: str) -> _Pair | None:
    found = _YOU_WROTE_BUT.search(text)
    if not found:
        return None
    heard_region = _HEARD_FRAME.sub("", _unquoted(found.group("heard")), count=1)
    if not heard_region or len(heard_region.split()) > _MAX_SPAN_WORDS:
        return None
    meant_region = _ARTICLE.sub("", _LEAD_IN.sub("", found.group("meant").strip()))
    meant = _first_words(meant_region, _MAX_SPAN_WORDS)
    heard, _ = _heard_span(heard_region, meant)
    # "you said it would rain, but I'm fine": what was said back is answered, not corrected.
    if _NOT_A_MISHEARD_START.match(heard) or (
        found.group("verb").lower() == "said" and not _SAID_BACK_SIGN.search(found.group("bridge"))
    ):
        return None
    # "you put two boxes but no, three": a number is contrasted with the number.
    heard_number, meant_number = _number_run(heard), _number_run(meant)
    if heard_number and meant_number and heard_number.lower() != meant_number.lower():
        heard, meant = heard_number, meant_number
    # "but I am Sikh", "but I live in Homburg": the statement the meant word is said in stays.
    statement = _STATEMENT_FRAME.search(found.group("bridge"))
    kept_from = found.start("bridge") + statement.start() if statement else found.start("meant")
    fact_text = text[: found.start()] + text[kept_from:]
    closest = _closest_span(meant, heard)
    if closest.lower() == heard.lower():
        # "teacher of math" / "teacher of physics": the spans alike at their start differ at
        # the end; the whole of both is trimmed of the words they share.
        return _Pair(heard_region, meant, fact_text)
    return _Pair(heard, closest, fact_text)


# "you've got my cat down as Pickle, it's Pixel", "You wrote 'there'. Should be 'their'.",
# "Saved as 'Dave'. It's Dev.": what was written down, then, without a "but", the word meant.
_YOU_WROTE_THEN = re.compile(
    r"(?:\byou(?:'ve| have)?\s+(?:written|wrote|typed|put(?:\s+down)?|spelled|spelt|saved|noted|"
    r"got)\s+(?:(?:me|my\s+[\w-]+)\s+)?(?:down\s+)?(?:as\s+)?|^(?:saved|written|noted)\s+as\s+)"
    r"['\"]?(?P<heard>[\w'-]+(?:\s+[\w'-]+)?)['\"]?\s*[,.;?]\s*(?:(?:no|nope)[,\s]+)?"
    r"(?:it's|its|it is|it should be|should be|I said|I told you|I'm|I am)\s+(?:an?\s+)?"
    r"['\"]?(?P<meant>[\w'-]+)['\"]?",
    re.I,
)


def _you_wrote_then_said(text: str) -> _Pair | None:
    """Without a "but", only words that sound alike make a pair: "you wrote the email, it's
    great" answers, it does not correct."""
    found = _YOU_WROTE_THEN.search(text)
    if not found:
        return None
    heard = found.group("heard").split()[-1].strip("'")
    meant = found.group("meant").strip("'")
    if heard.lower() == meant.lower() or _likeness(heard, meant) < _SOUNDS_ALIKE_UNSIGNED:
        return None
    return _Pair(heard, meant, text[: found.start()] + text[found.start("meant") :])


# "you said I'm a pediatrician, I'm a podiatrist": what the assistant said back and the
# user's own statement in the same frame; the words that differ are the pair.
_YOU_SAID_PARALLEL = re.compile(
    r"\byou\s+(?:said|say|think|thought|have\s+me\s+down\s+as)\s+(?:that\s+)?"
    r"(?P<frame>I'm|I am|I\s+\w+|my\s+\w+(?:'s|\s+is))\s+(?P<heard>[^,.;!?]+?)\s*[,.;]\s*"
    r"(?:(?:but|actually|no|well)[\s,]+)*(?P=frame)\s+(?P<meant>[^,.;!?]+)",
    re.I,
)


def _same_frame_spans(found: re.Match[str]) -> tuple[str, str] | None:
    """The heard and meant words of two statements in one frame ("I'm a pediatrician" /
    "I'm a podiatrist"): the heard span up to the next clause, as many meant words, both
    without an article; None when they are too long to be a word misheard."""
    heard = _until_next_clause(_ARTICLE.sub("", found.group("heard").strip()))
    meant = _first_words(_ARTICLE.sub("", found.group("meant").strip()), len(heard.split()))
    return (heard, meant) if _is_short_pair(heard, meant) else None


def _you_said_parallel(text: str) -> _Pair | None:
    found = _YOU_SAID_PARALLEL.search(text)
    spans = _same_frame_spans(found) if found else None
    if found is None or spans is None:
        return None
    heard, meant = spans
    # What holds is the user's own statement; what the assistant said is gone.
    stated = f"{found.group('frame')} {found.group('meant')}"
    return _Pair(heard, meant, text[: found.start()] + stated + text[found.end() :])


def _you_keep_calling(text: str) -> _Pair | None:
    found = _YOU_KEEP_CALLING.search(text)
    if not found:
        return None
    who, heard, meant = found.group("who"), found.group("heard"), found.group("meant")
    if heard.lower() == meant.lower():
        return None
    # What is left says who has the name meant: "my cat Mishka", "my son Tim", "my name is Cate".
    if who.lower() == "me":
        stated = f"my name is {meant}"
    elif who.lower().startswith("my "):
        stated = who if who.split()[-1].lower() == meant.lower() else f"{who} {meant}"
    else:
        stated = ""
    return _Pair(heard, meant, text[: found.start()] + stated + text[found.end() :])


_SAID_AFTER = re.compile(r"\s+I\s+(?:said|meant|mean|say)$", re.I)


def _not_heard_then_meant(text: str) -> _Pair | None:
    found = _NOT_Y_X.search(text)
    if not found:
        return None
    heard = _ARTICLE.sub("", found.group("heard").strip())
    meant = _ARTICLE.sub("", _LEAD_IN.sub("", found.group("meant").strip()))
    # "not Tuesday, Thursday I said": the words that say it was said are no part of it.
    meant = _SAID_AFTER.sub("", meant)
    if not _is_short_pair(heard, meant):
        return None
    # "not the weather of Austria, I said Australia": the words that sound like it.
    heard = _closest_span(heard, meant)
    return _Pair(heard, meant, text.replace(found.group(0), " ", 1))


def _parallel_copulas(text: str, triggered: bool) -> _Pair | None:
    found = _PARALLEL.search(text)
    spans = _same_frame_spans(found) if found else None
    if found is None or spans is None:
        return None
    heard, meant = spans
    # "it's not Lyon, it's Lille": two names in the impersonal shape are a correction even
    # when they do not sound alike; "I'm not Hindu, I'm an atheist" is a statement.
    names = heard[:1].isupper() and meant[:1].isupper()
    impersonal = bool(_IMPERSONAL_LEAD.match(found.group("lead"))) or "n't" in found.group("lead")
    if not (triggered or _likeness(heard, meant) >= _SOUNDS_ALIKE or (impersonal and names)):
        return None
    return _Pair(heard, meant, text[: found.start()] + text[found.end("heard") :].lstrip(" ,"))


# "I didn't say book the hotel in Nice, I said book the hotel in Nîmes", "I don't live in
# Cork, I said Kortrijk": a statement denied, then what was said instead.
_UNSAID_THEN_SAID = re.compile(
    r"(?P<denied>\bI\s+(?:didn't|did not|never|don't|do not)\s+(?P<verb>say|mean|said|\w+)\b"
    r"(?P<heard>[^,.;!?]*?))\s*,?\s+(?:but\s+)?I\s+(?:said|meant|say)\s+(?P<meant>[^,.;!?]+)",
    re.I,
)
_DENIAL = re.compile(r"\b(?:didn't|did not|never|don't|do not)\s+", re.I)


def _unsaid_then_said(text: str) -> _Pair | None:
    """The words that differ between a statement denied and the one said instead; a denied
    statement of another verb ("I don't live in Cork") ends with the word misheard."""
    found = _UNSAID_THEN_SAID.search(text)
    if not found:
        return None
    said_again = found.group("verb").lower() in ("say", "mean", "said")
    meant_words = found.group("meant").split()
    heard_words = found.group("heard").split()
    if (
        said_again
        and len(meant_words) < len(heard_words)
        and not _shares_a_word(heard_words, meant_words)
    ):
        # "I didn't say I'm moving to Denver, I said Denmark": only the last words were
        # misheard, and what holds is the statement with the word said in their place.
        size = len(meant_words)
        heard, meant = " ".join(heard_words[-size:]), " ".join(meant_words)
        stated = " ".join(heard_words[:-size] + meant_words)
    elif said_again:
        heard, meant = _trim_shared_words(" ".join(heard_words), " ".join(meant_words))
        heard, meant = _ARTICLE.sub("", heard), _ARTICLE.sub("", meant)
        stated = found.group("meant")
    else:
        size = len(meant_words)
        if len(heard_words) <= size:
            return None
        heard, meant = " ".join(heard_words[-size:]), found.group("meant").strip()
        # "I don't live in Cork, I said Kortrijk": what holds is the statement with the word
        # said in place of the one misheard, and no longer denied.
        denied = found.group("denied")
        stated = _DENIAL.sub("", denied[: len(denied) - len(heard)], count=1) + meant
    if not _is_short_pair(heard, meant) or heard.lower() == meant.lower():
        return None
    return _Pair(heard, meant, text[: found.start()] + stated + text[found.end() :])


def _shares_a_word(first: list[str], second: list[str]) -> bool:
    return bool({w.lower() for w in first} & {w.lower() for w in second})


# "when I said I'm allergic to almonds I meant walnuts": a statement the user made, and the
# word meant in place of its last words.
_SAID_THEN_MEANT = re.compile(
    r"\bwhen\s+I\s+said\s+(?P<said>[^,.;!?]+?)\s*,?\s+I\s+meant\s+(?P<meant>[^,.;!?]+)", re.I
)


def _said_then_meant(text: str) -> _Pair | None:
    found = _SAID_THEN_MEANT.search(text)
    if not found:
        return None
    said, meant = found.group("said").split(), _ARTICLE.sub("", found.group("meant").strip())
    meant = _until_next_clause(meant)
    size = len(meant.split())
    if len(said) <= size:
        return None
    heard = " ".join(said[-size:])
    if not _is_short_pair(heard, meant) or heard.lower() == meant.lower():
        return None
    stated = " ".join(said[:-size] + [meant])
    return _Pair(heard, meant, text[: found.start()] + stated + text[found.end() :])


def _until_next_clause(span: str) -> str:
    """ "a bakery I work at" -> "bakery": a span ends where the next clause starts."""
    words = span.split()
    for position, word in enumerate(words):
        if position and word.lower() in _SPAN_STOP:
            return " ".join(words[:position])
    return span


def _not_heard_then_meant_run_on(text: str) -> _Pair | None:
    found = _NOT_Y_X_RUN_ON.search(text)
    if not found:
        return None
    words = found.group("rest").split()
    if words and _ARTICLE.match(words[0] + " "):
        words = words[1:]
    best: tuple[float, int, str, str] | None = None
    for size in range(1, min(_MAX_SPAN_WORDS, len(words)) + 1):
        heard = " ".join(words[:size])
        for start in range(size, min(size + 3, len(words))):
            for length in range(1, _MAX_SPAN_WORDS + 1):
                if start + length > len(words):
                    break
                meant = " ".join(words[start : start + length])
                score = _likeness(heard, meant)
                if heard.lower() == meant.lower() or min(len(heard), len(meant)) < 3:
                    continue
                if best is None or (score, -(size + length)) > (best[0], best[1]):
                    best = (score, -(size + length), heard, meant)
    if best is None or best[0] < 0.6 or not _is_short_pair(best[2], best[3]):
        return None
    fact_text = text[: found.start()] + " " + found.group("rest").replace(best[2], "", 1)
    return _Pair(best[2], best[3], fact_text)


# "a plumber, no sorry, an electrician", "seven thirty no eight thirty sorry", "allergic to
# kiwi, I mean mango", "as cashier, sorry, as accountant": the speaker's own slip, a sign that
# takes it back, and what replaces its last words.
_TAKE_BACK = rf"(?:{_RESTATING}|I\s+mean(?:t)?|scratch\s+that|correction)"
# The slip and its sign may be sentences of their own ("Vegetarian. Scratch that, vegan.",
# "Allergic to sulfa. Wait, no. Codeine."); a hesitation normalising keeps may come before the
# "no" ("Portuguese, ah no, sorry, Galician"; not "oh no", as often dismay as a slip).
_SELF_CORRECTED = re.compile(
    r"(?:^|(?<=[,.;!?]))\s*(?P<said>[^,.;!?]*?[^\s,.;!?])[\s,.;:]+(?P<sign>"
    r"(?:(?:sorry|wait|oops|ah|er)[\s,.]+)*(?:no|nope)(?:[\s,]+(?:sorry|wait|oops))?"
    rf"(?:[\s,]+{_TAKE_BACK})?"
    rf"|(?:(?:sorry|wait|oops|ugh)[\s,]+)?{_TAKE_BACK}"
    r"|sorry(?=\s*,))[\s,.;:]+(?P<meant>[^,.;!?]+)",
    re.I,
)
_SELF_CORRECTION_SIGN = re.compile(rf"\S[\s,.]+(?:no|nope)\b|\b{_TAKE_BACK}\b|,\s*sorry\s*,", re.I)
_APOLOGY = re.compile(rf"\b(?:sorry|wait|oops|{_TAKE_BACK})\b", re.I)
# Without a "no", the sign may be a filler ("I love jazz, I mean, who doesn't"): what follows
# it replaces a slip only when it is a short naming phrase, with no clause of its own.
_NO_TAKE_BACK_WORDS = frozenset(
    "who what when where why how he she they we you it this that these those there here is "
    "are was were be been do does did don't doesn't didn't can can't will won't would should "
    "could have has had not really just also too like love hate want think know".split()
)
_POSSESSIVE_OR_ARTICLE = re.compile(r"^(?:my|a|an|the)\s+", re.I)
_ARTICLES = frozenset({"a", "an", "the"})
_SAYING = re.compile(r"\bI\s+(?:say|said|mention|mentioned|call)\b", re.I)
_LINK_WORDS = frozenset("a an the as my to in at of on for with from and".split())


_SHORT_NOTE_WORDS = 4
# Times of day said as words, which a number is put right with ("Eleven - scratch that - noon").
_CLOCK_WORD = re.compile(r"^(?:noon|midnight|midday)$", re.I)


def _self_corrected(text: str) -> _Pair | None:
    """The words a speaker takes back mid-sentence and those said in their place: a number
    for a number, or after an apology the same count of words ("my daughter ... no, sorry, my
    son" replaces the words after the last "my")."""
    if not _SELF_CORRECTION_SIGN.search(text):
        return None  # most turns have no "no" mid-sentence; the pattern costs more than this
    for found in _SELF_CORRECTED.finditer(text):
        meant = re.sub(r"\s+(?:sorry|I mean)$", "", found.group("meant").strip(), flags=re.I)
        said_words = found.group("said").split()
        counted = 0
        while counted < len(said_words) and _NUMBER_WORD.match(said_words[-1 - counted]):
            counted += 1
        heard_number = " ".join(said_words[len(said_words) - counted :])
        meant_number = _number_run(meant) or _CLOCK_WORD.match(meant.strip()) and meant.strip()
        if meant_number and not heard_number:
            # "two cans of chickpeas no wait three cans": the number said before the same word.
            # "I have two cats no wait three": the last number said, when no word follows.
            unit = meant.split()[len(meant_number.split()) :][:1]
            before_unit = rf"(?=\s+{re.escape(unit[0])}\b)" if unit else ""
            earlier = re.findall(rf"\b([\w.:]+){before_unit}", found.group("said"))
            numbers = [word for word in earlier if _NUMBER_WORD.match(word)]
            heard_number = numbers[-1] if numbers else ""
        calendar = _CALENDAR_WORD_SAID.findall(found.group("said"))
        if calendar and _CALENDAR_WORD_SAID.fullmatch(meant.strip()):
            # "Thursday at 4. Scratch that, Wednesday.": a day for a day, a month for a month.
            heard, meant = calendar[-1], meant.strip()
        elif heard_number or meant_number:
            if not (heard_number and meant_number):
                continue
            heard, meant = heard_number, meant_number
        else:
            sign = found.group("sign")
            # "Allergic to cashews. No, pistachios.": a bare "no" after a short note swaps its
            # last word for one word of the same kind.
            # "No, pistachios." and not "no sugar": a bare "no" that stands apart from the word.
            no_apart = (
                re.fullmatch(r"no|nope", sign.strip(" ,.;:"), re.I) is not None
                and "," in text[found.end("sign") : found.start("meant")]
            )
            bare_no = (
                no_apart
                and found.group("said") == found.group("said").lstrip()
                and bool(re.search(r"[.!;]\s*$", text[: found.start("sign")]))
                and len(said_words) <= _SHORT_NOTE_WORDS
                and " " not in meant.strip()
                and _one_word_swap(said_words, meant)
                and said_words[-1].lower().endswith("s") == meant.lower().endswith("s")
            )
            # "My husband's name is Dan, no, Dave.": a bare "no" set off by commas between two
            # names swaps the one for the other.
            named_swap = (
                no_apart
                and "," in text[found.end("said") : found.start("sign")]
                and len(said_words) >= 2
                and _is_name(said_words[-1])
                and _is_name(meant.strip())
                and _one_word_swap(said_words, meant)
            )
            if not (_APOLOGY.search(sign) or bare_no or named_swap) or (
                # A bare "sorry" is as often an apology ("I'm back, sorry, the doorbell"): it
                # takes a slip back only in the slip's own frame ("as cashier, sorry, as
                # accountant").
                sign.lower() == "sorry"
                and not (_repeats_its_frame(said_words, meant) or _one_word_swap(said_words, meant))
            ):
                continue
            lead = _POSSESSIVE_OR_ARTICLE.match(meant)
            meant = _until_next_clause(_POSSESSIVE_OR_ARTICLE.sub("", meant))
            size = len(meant.split())
            lowered = [w.lower() for w in said_words]
            start = len(said_words) - size
            # "my daughter ... my son", "a beagle ... a basset hound": the slip starts after
            # the last word of the kind the meant words start with.
            kin = {"my"} if lead and lead.group().strip().lower() == "my" else _ARTICLES
            if lead and kin & set(lowered):
                start = max(i for i, word in enumerate(lowered) if word in kin) + 1
            heard = " ".join(said_words[start:])
            meant_words = set(re.findall(r"[a-z]+", meant.lower()))
            if not re.search(r"\b(?:no|nope)\b", sign, re.I) and (
                _NO_TAKE_BACK_WORDS & meant_words
                # "when I say the loft, I mean the studio": what a word stands for, not a slip
                or _SAYING.search(found.group("said"))
                # "tea, I mean green tea": a detail of what was said, nothing taken back
                or _adds_detail(heard, meant_words, aligned=bool(lead))
            ):
                continue
        if heard.lower() == meant.lower() or not _is_short_pair(heard, meant):
            continue
        # What holds is the sentence with the words said in place of the slip.
        said = found.group("said")
        at = said.rfind(heard)
        stated = said[:at] + meant + said[at + len(heard) :] if at >= 0 else said
        rest = re.sub(rf",?\s+not\s+{re.escape(heard)}\b", "", text[found.end() :], flags=re.I)
        return _Pair(heard, meant, text[: found.start()] + stated + rest)
    return None


def _adds_detail(heard: str, meant_words: set[str], aligned: bool) -> bool:
    """ "I drink tea, I mean green tea": what follows says again a word of the slip, and only
    adds to it. When both start alike ("my dog Bruno, or rather my cat Bruno") the slip is
    the phrase after that start, and a detail only when every word of it comes again."""
    heard_words = set(re.findall(r"[a-z]+", heard.lower())) - _LINK_WORDS
    if aligned:
        return bool(heard_words) and heard_words <= meant_words
    return bool(heard_words & meant_words)


def _is_name(word: str) -> bool:
    """A capitalised word of letters ("Dave", "Lille"), not the pronoun "I"."""
    return len(word) >= 2 and word[:1].isupper() and word.isalpha()


def _one_word_swap(said_words: list[str], meant: str) -> bool:
    """ "book it for Thursday, sorry, Tuesday": one word in place of the last one said."""
    last = said_words[-1].lower() if said_words else ""
    return (
        len(meant.split()) == 1
        and len(last) >= 3
        and last.isalnum()
        and not {last, meant.lower()} & _NOT_SWAPPED
    )


# Replies and leave-takings are no word swapped for another ("Thanks, sorry, bye").
_NOT_SWAPPED = _NO_TAKE_BACK_WORDS | frozenset(
    "thanks thank bye goodbye okay ok yes yeah no right sure".split()
)


def _repeats_its_frame(said_words: list[str], meant: str) -> bool:
    """ "I work as a baker" / "as a butcher": the meant words repeat the ones before the
    said words' last, and change only that one."""
    meant_words = meant.lower().split()
    frame = [word.lower() for word in said_words[-len(meant_words) : -1]]
    return 2 <= len(meant_words) <= len(said_words) and frame == meant_words[:-1]


def _meant_of(segment: str) -> str:
    """The words a segment before "not" means: a cleft's thing ("it's cashews I'm allergic
    to"), or the segment without its lead-in ("No, I said ...") and article."""
    cleft = CLEFT.match(segment.strip())
    return _ARTICLE.sub("", cleft["thing"] if cleft else _LEAD_IN.sub("", segment.strip()))


def _meant_then_heard(text: str, triggered: bool) -> _Pair | None:
    """ "X, not Y": X is the clause before "not" or, when that does not sound like Y, an earlier
    one of the sentence ("it's Worcester, the one in Massachusetts, not Wooster")."""
    for found in _NOT_HEARD.finditer(text):
        if _NEGATED_VERB.search(text[: found.start()]):
            continue  # "the letter did not arrive": a verb negated, nothing misheard
        if "," not in found.group(0) and re.search(r"\b(?:and|or)$", text[: found.start()], re.I):
            continue  # "stay between us and not end up in your memory": two things asked
        sentence_start = max(text.rfind(mark, 0, found.start()) for mark in ".;!?") + 1
        segments = _segments_nearest_first(text[sentence_start : found.start()])
        if not segments:
            continue
        region = found.group("region")
        chosen: tuple[str, str, int, str] | None = None
        # "biscuit not brisket biscuit": the slip, then the meant word said again.
        words, said_words = region.split(), _meant_of(segments[0]).split()
        if (
            said_words
            and 2 <= len(words) <= 3
            and words[-1].lower() == said_words[-1].lower()
            and (len(words) == 2 or words[1].lower() in _FILLERS)
        ):
            slip, said_last = words[0], said_words[-1]
            before = said_words[-2] if len(said_words) > 1 else ""
            # "the red one not the blue one", "oat milk not goat milk": two of a kind said in
            # parallel, the slip sounding like the word before the shared one.
            if (
                not _PARALLEL_START.match(region)
                and _likeness(slip, said_last) >= _SOUNDS_ALIKE_UNSIGNED
                and _likeness(slip, said_last) > _likeness(slip, before)
            ):
                chosen = (slip, said_last, len(region), segments[0])
        for nearest, segment in enumerate(segments[:3] if chosen is None else []):
            meant_raw = _meant_of(segment)
            heard, consumed = _heard_span(region, meant_raw)
            meant = _closest_span(meant_raw, heard)
            # A swapped number, day or name is the segment right before "not" ("No, I said
            # Ana, not Nia": never the "No").
            slip = nearest == 0 and (
                _slip_pair(heard, meant) or _units_of_one_measure(heard, meant)
            )
            alike = _likeness(heard, meant) >= _SOUNDS_ALIKE or slip
            # "the name is Niamh, not Neve": a name is said as it is spelled, however it sounds.
            if meant.lower() != heard.lower() and (alike or re.search(_NAME_IS, segment, re.I)):
                chosen = (heard, meant, consumed, segment)
                break
        if chosen is None:
            meant_raw = _meant_of(segments[0])
            heard, consumed = _heard_span(region, meant_raw)
            meant = _closest_span(meant_raw, heard)
            if triggered or _said_as_words(text, region, consumed, heard, meant):
                chosen = (heard, meant, consumed, segments[0])
        if chosen is None:
            continue
        heard, meant, consumed, segment = chosen
        if _NOT_A_MISHEARD_START.match(heard):
            continue
        # "Cairns, not Cannes." said on its own, with nothing before or after.
        bare = len(segments) == 1 and segment.strip() == _LEAD_IN.sub("", segment.strip())
        bare = bare and len(segment.split()) <= _MAX_SPAN_WORDS and not region[consumed:].strip()
        if not (
            triggered
            or bare
            or consumed == len(region)
            and region.split()[-1].lower() == meant.lower()
            or _said_as_words(text, region, consumed, heard, meant)
            or _IMPERSONAL_LEAD.match(segment.strip())
            or _names_alike(heard, meant)
            or (_all_lower_case(text) and _long_words_alike(heard, meant))
        ):
            continue
        end = found.start("region") + consumed
        if _units_of_one_measure(heard, meant):
            # "Kilos, not pounds. Always.": the pair is also the standing rule it puts right.
            return _Pair(heard, meant, text)
        return _Pair(heard, meant, text[: found.start()] + text[end:])
    return None


_FILLERS = frozenset("yeah yes uh um er erm sorry like so i.e.".split())
# "May" is a name as often as a month.
_CALENDAR_WORD_SAID = re.compile(
    rf"\b(?:{'|'.join(sorted((WEEKDAYS | MONTHS) - {'may'}))})\b", re.I
)
_PARALLEL_START = re.compile(
    r"^\s*(?:a|an|the|my|this|that|these|those|some|any|one|ones|thing|things|kind|way|time)\b",
    re.I,
)


def _said_as_words(text: str, region: str, consumed: int, heard: str, meant: str) -> bool:
    """ "biscuit not brisket biscuit": the meant word said again right after the slip; "That's
    'Nguyen', not 'Win'": both words quoted, said as words."""
    if not heard or not meant:
        return False
    again = re.match(rf"\W*{re.escape(meant)}\b", region[consumed:], re.I) is not None
    quoted = all(
        re.search(rf"[{_QUOTES}]{re.escape(_unquoted(word))}[{_QUOTES}]", text)
        for word in (heard, meant)
    )
    return again or quoted


_TITLE = re.compile(r"^(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+", re.I)


def _names_alike(heard: str, meant: str) -> bool:
    """ "Dr. Paz, not Dr. Pass": one person's name said as two names that sound alike is a
    name misheard, however plainly it is said."""
    heard, meant = _TITLE.sub("", heard.strip()), _TITLE.sub("", meant.strip())
    names = all(
        len(words) == 1
        and words[0][:1].isupper()
        and words[0][1:].islower()
        and not _CALENDAR_NAME.match(words[0])
        for words in (heard.split(), meant.split())
    )
    return names and _likeness(heard, meant) >= _SOUNDS_ALIKE


def _all_lower_case(text: str) -> bool:
    """A turn written with no capitals (a transcript's), the pronoun "I" aside."""
    return re.sub(r"\bI\b", "i", text).islower()


def _long_words_alike(heard: str, meant: str) -> bool:
    """ "i live in leamington not lemington": in a turn written all in lower case a name has no
    capital to show it, so two long single words that differ by a letter or two stand for
    one ("a shirt not a skirt" stays a choice: short words sound alike by chance)."""
    return (
        len(heard.split()) == len(meant.split()) == 1
        and min(len(heard), len(meant)) >= _LONG_WORD
        and _likeness(heard, meant) >= _CLOSE_LIKENESS
        and not _CALENDAR_NAME.match(meant)
    )


_LONG_WORD = 6
_CLOSE_LIKENESS = 0.85


# "book it for Monday, not Sunday": days and months said plainly against each other are a
# choice, not a name misheard (with a sign of correction they still are one: _slip_pair).
_CALENDAR_NAME = re.compile(
    r"^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|"
    r"august|september|october|november|december)$",
    re.I,
)


_NUMBER_WORD = re.compile(
    r"^(?:\d+(?:[.:]\d+)?|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|thousand|million)$",
    re.I,
)
_WEEKDAY = re.compile(r"^(?:mon|tues|wednes|thurs|fri|satur|sun)day$", re.I)


_MULTIPLIER = re.compile(r"^(?:hundred|thousand|million)$", re.I)


def _number_run(span: str) -> str:
    """ "fourteen hundred people" -> "fourteen hundred": the number a span starts with."""
    words = span.split()
    size = 0
    while size < len(words) and _NUMBER_WORD.match(words[size]):
        size += 1
    return " ".join(words[:size])


def _slip_pair(heard: str, meant: str) -> bool:
    """Two numbers, two weekdays or two one-word names with the same first sound: what a
    recogniser swaps for one another whatever the rest ("twelve"/"twenty", "Hove"/"Hull");
    "Celsius"/"Fahrenheit" is a contrast."""
    if " " in heard.strip() or " " in meant.strip() or heard[:1].lower() != meant[:1].lower():
        return False
    names = (
        heard[:1].isupper() and meant[:1].isupper() and heard[1:].islower() and meant[1:].islower()
    )
    return names or any(
        bool(pattern.match(heard)) and bool(pattern.match(meant))
        for pattern in (_NUMBER_WORD, _WEEKDAY)
    )


def _units_of_one_measure(heard: str, meant: str) -> bool:
    """ "Celsius, not Fahrenheit.", "Kilos, not pounds.": two units of the same measure said
    against each other put one right; "grams, not cups" chooses how to measure."""
    measure = UNIT_SYSTEMS.get(heard.strip().lower())
    return measure is not None and measure == UNIT_SYSTEMS.get(meant.strip().lower())


def _segments_nearest_first(sentence_part: str) -> list[str]:
    return [s for s in reversed(sentence_part.split(",")) if s.strip()]


def _heard_span(region: str, meant: str) -> tuple[str, int]:
    """The start of `region` that sounds most like `meant` (shortest on ties), stopping at the
    next clause, and how many characters of `region` it takes."""
    words = list(re.finditer(r"\S+", region))
    if words and _ARTICLE.match(words[0].group() + " "):
        words = words[1:]
    kept = []
    for position, word in enumerate(words[:_MAX_SPAN_WORDS]):
        if position and word.group().lower() in _SPAN_STOP:
            break
        kept.append(word)
    if not kept:
        return "", 0
    best, best_score = 1, -1.0
    for size in range(1, len(kept) + 1):
        score = _likeness(" ".join(w.group() for w in kept[:size]), meant)
        if score > best_score:
            best, best_score = size, score
    span = region[kept[0].start() : kept[best - 1].end()]
    return span.strip(" ,."), kept[best - 1].end()


def _first_words(text: str, count: int) -> str:
    return " ".join(text.split()[: max(count, 1)])


def _trim_shared_words(heard: str, meant: str) -> tuple[str, str]:
    """ "my son" / "my daughter" -> "son" / "daughter": only the words that differ. A number
    said in words is one value ("seven thirty" / "eight thirty" stay whole), as people label
    the times, codes and amounts they correct."""
    heard_words, meant_words = heard.strip(" ,.").split(), meant.strip(" ,.").split()
    # "I'm not a": a span cut off before its word leaves nothing to trim.
    if not heard_words or not meant_words:
        return " ".join(heard_words), " ".join(meant_words)
    numbers = _number_run(heard) == " ".join(heard_words) and _number_run(meant) == " ".join(
        meant_words
    )
    if numbers:
        return " ".join(heard_words), " ".join(meant_words)
    # "three hundred" / "three thousand": a multiplier alone is no number said.
    while (
        len(heard_words) > 1
        and len(meant_words) > 1
        and heard_words[0].lower() == meant_words[0].lower()
        and not (numbers and _MULTIPLIER.match(heard_words[1]))
    ):
        heard_words, meant_words = heard_words[1:], meant_words[1:]
    # "four hundred" / "fourteen hundred": the multiplier is part of the number said.
    while (
        not (numbers and _MULTIPLIER.match(heard_words[-1]))
        and len(heard_words) > 1
        and len(meant_words) > 1
        and heard_words[-1].lower() == meant_words[-1].lower()
    ):
        heard_words, meant_words = heard_words[:-1], meant_words[:-1]
    return " ".join(heard_words), " ".join(meant_words)


# "luna not lunar", "ana not anna one n", "rise, rice": one word said for another that shares
# nearly all its letters is a slip of the ear; contrasts people draw share fewer
# (vegan/vegetarian 0.67, welsh/english 0.67).
_NEARLY_ONE_WORD = 0.75


def one_word_misheard(heard: str, meant: str) -> bool:
    """Whether two single words differ by a letter or two, as a misheard word does."""
    if len(heard.split()) != 1 or len(meant.split()) != 1 or heard.lower() == meant.lower():
        return False
    return _likeness(heard, meant) >= _NEARLY_ONE_WORD


def _likeness(first: str, second: str) -> float:
    """How alike two spans sound, roughly: letter overlap, ignoring case and spaces."""
    a, b = re.sub(r"[^a-z0-9]", "", first.lower()), re.sub(r"[^a-z0-9]", "", second.lower())
    return difflib.SequenceMatcher(None, a, b).ratio() if a and b else 0.0


def _is_short_pair(heard: str, meant: str) -> bool:
    """ "not Y, X" is a correction only for short spans; longer ones are ordinary negation."""
    return (
        0 < len(heard.split()) <= _MAX_SPAN_WORDS
        and 0 < len(meant.split()) <= _MAX_SPAN_WORDS
        and not _NOT_A_CORRECTION_START.match(meant.strip())
        and not _NOT_A_MISHEARD_START.match(heard.strip())
    )


_NOT_A_CORRECTION_START = re.compile(
    r"^(?:never|always|have|has|had|I|it|that|but|just|so|like|really|way|not|or|and|thanks|"
    r"thank|please|maybe|probably|perhaps|though|either|anymore|sure)\b",
    re.I,
)
# "not sure, maybe", "not now, later", "not me, my sister": negation, not a misheard word.
_NOT_A_MISHEARD_START = re.compile(
    r"^(?:sure|really|exactly|quite|much|at all|yet|now|today|tonight|anymore|always|ever|even|again|"
    r"just|only|so|too|very|bad|great|good|a fan|a big|that|this|it|me|you|him|her|us|them|mine|"
    r"yours|my|in the mood|anything|everything|nothing|a lot|the point|a problem|problem|an issue|"
    r"a big deal|right|correct|true|what|to|"
    # "80 euro a week, not more", "just not for me": a limit or a taste, nothing misheard.
    r"more|less|fewer|over|under|above|below|for me|for us|my thing|my cup of tea)\b",
    re.I,
)


def _closest_span(meant: str, heard: str) -> str:
    """The shortest span of `meant` aligned with `heard` ("fifteen minutes" vs "fifty"); all of
    `meant` when no part of it sounds like `heard` ("mechanical engineering" vs "marketing")."""
    words, size = meant.split(), len(heard.split())
    if len(words) <= size or all(w[:1].isupper() for w in words):
        return meant.strip()
    best, best_score = "", -1.0
    for start in range(len(words) - size + 1):
        window = " ".join(words[start : start + size])
        score = _likeness(window, heard)
        # Of windows that sound as alike, the last: what a denial contrasts is said right
        # before it ("she lives in Leeds, not Leicester": "Leeds", not "lives").
        if score >= best_score:
            best, best_score = window, score
    if best_score >= 0.5:
        return best
    # "allergic to penicillin" vs "peanuts": what is contrasted is the thing the last
    # preposition names; "mechanical engineering" vs "marketing" has none and is all meant.
    after = re.split(r"\b(?:to|in|at|of|for|with|from|on|about|like)\s+", meant, flags=re.I)[-1]
    after = _ARTICLE.sub("", after.strip())
    return after if after and len(after.split()) <= _MAX_SPAN_WORDS else meant.strip()
