from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetReleaseHealthRequest(_message.Message):
    __slots__ = ("owner", "repo", "releases")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    REPO_FIELD_NUMBER: _ClassVar[int]
    RELEASES_FIELD_NUMBER: _ClassVar[int]
    owner: str
    repo: str
    releases: _containers.RepeatedCompositeFieldContainer[ReleaseVersion]
    def __init__(self, owner: _Optional[str] = ..., repo: _Optional[str] = ..., releases: _Optional[_Iterable[_Union[ReleaseVersion, _Mapping]]] = ...) -> None: ...

class ReleaseVersion(_message.Message):
    __slots__ = ("tag", "version")
    TAG_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    tag: str
    version: str
    def __init__(self, tag: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class GetReleaseHealthResponse(_message.Message):
    __slots__ = ("figures", "error")
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    figures: _containers.RepeatedCompositeFieldContainer[VersionHealth]
    error: str
    def __init__(self, figures: _Optional[_Iterable[_Union[VersionHealth, _Mapping]]] = ..., error: _Optional[str] = ...) -> None: ...

class VersionHealth(_message.Message):
    __slots__ = ("version", "sessions", "crashed_sessions")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    CRASHED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    version: str
    sessions: int
    crashed_sessions: int
    def __init__(self, version: _Optional[str] = ..., sessions: _Optional[int] = ..., crashed_sessions: _Optional[int] = ...) -> None: ...
