"""Whether the person asking may change a Feishu chat's settings, as Feishu tells it
(the chat's information, `im/v1/chats/:chat_id`): the group's owner and its managers.
In a one-to-one chat the person is the chat's only admin: a message says so itself (the
inbox knows it from the question), a card click does not, and the chat's information
does (`chat_mode` "p2p")."""

from __future__ import annotations

from lark_oapi.api.im.v1 import GetChatRequest, GetChatResponse

from adapters.feishu.transport import FeishuTransport
from bot.chat.inbound import Question


class AdminUnknown(Exception):
    """Feishu did not say who the chat's admins are."""


async def is_chat_admin(transport: FeishuTransport, question: Question) -> bool:
    """True for the chat's owner or one of its managers (by open_id)."""
    user = question.user_id
    if user is None:
        return False
    request = (GetChatRequest.builder().chat_id(question.channel_id)
               .user_id_type("open_id").build())
    response = await transport.send(request, GetChatResponse)
    if not response.success() or response.data is None:
        raise AdminUnknown(f"feishu answered {response.code}: {response.msg}")
    if response.data.chat_mode == "p2p":
        return True  # the person's own chat with the bot
    managers = response.data.user_manager_id_list or []
    return user == response.data.owner_id or user in managers
