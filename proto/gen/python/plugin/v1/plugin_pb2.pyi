import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InitializeRequest(_message.Message):
    __slots__ = ("server_version", "config", "protocol_version")
    class ConfigEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    server_version: str
    config: _containers.ScalarMap[str, str]
    protocol_version: int
    def __init__(self, server_version: _Optional[str] = ..., config: _Optional[_Mapping[str, str]] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class InitializeResponse(_message.Message):
    __slots__ = ("success", "error", "manifest", "protocol_version")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    success: bool
    error: str
    manifest: PluginManifest
    protocol_version: int
    def __init__(self, success: _Optional[bool] = ..., error: _Optional[str] = ..., manifest: _Optional[_Union[PluginManifest, _Mapping]] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class ShutdownResponse(_message.Message):
    __slots__ = ("success",)
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    def __init__(self, success: _Optional[bool] = ...) -> None: ...

class HealthCheckRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HealthCheckResponse(_message.Message):
    __slots__ = ("healthy", "status", "details")
    class DetailsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HEALTHY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    healthy: bool
    status: str
    details: _containers.ScalarMap[str, str]
    def __init__(self, healthy: _Optional[bool] = ..., status: _Optional[str] = ..., details: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GetManifestRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PluginManifest(_message.Message):
    __slots__ = ("name", "version", "description", "subscribed_events", "routes", "required_permissions", "license_tier")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIBED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    ROUTES_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_PERMISSIONS_FIELD_NUMBER: _ClassVar[int]
    LICENSE_TIER_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    description: str
    subscribed_events: _containers.RepeatedScalarFieldContainer[str]
    routes: _containers.RepeatedCompositeFieldContainer[PluginRoute]
    required_permissions: _containers.RepeatedScalarFieldContainer[str]
    license_tier: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., description: _Optional[str] = ..., subscribed_events: _Optional[_Iterable[str]] = ..., routes: _Optional[_Iterable[_Union[PluginRoute, _Mapping]]] = ..., required_permissions: _Optional[_Iterable[str]] = ..., license_tier: _Optional[str] = ...) -> None: ...

class PluginRoute(_message.Message):
    __slots__ = ("method", "path", "description")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    method: str
    path: str
    description: str
    def __init__(self, method: _Optional[str] = ..., path: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class PluginEvent(_message.Message):
    __slots__ = ("event_type", "payload", "timestamp", "repo_id", "org_id")
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    REPO_ID_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    event_type: str
    payload: _struct_pb2.Struct
    timestamp: _timestamp_pb2.Timestamp
    repo_id: int
    org_id: int
    def __init__(self, event_type: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., repo_id: _Optional[int] = ..., org_id: _Optional[int] = ...) -> None: ...

class EventResponse(_message.Message):
    __slots__ = ("handled", "error")
    HANDLED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    handled: bool
    error: str
    def __init__(self, handled: _Optional[bool] = ..., error: _Optional[str] = ...) -> None: ...

class HTTPRequest(_message.Message):
    __slots__ = ("method", "path", "headers", "body", "query_params")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class QueryParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    QUERY_PARAMS_FIELD_NUMBER: _ClassVar[int]
    method: str
    path: str
    headers: _containers.ScalarMap[str, str]
    body: bytes
    query_params: _containers.ScalarMap[str, str]
    def __init__(self, method: _Optional[str] = ..., path: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ..., query_params: _Optional[_Mapping[str, str]] = ...) -> None: ...

class HTTPResponse(_message.Message):
    __slots__ = ("status_code", "headers", "body")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    status_code: int
    headers: _containers.ScalarMap[str, str]
    body: bytes
    def __init__(self, status_code: _Optional[int] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ...) -> None: ...
