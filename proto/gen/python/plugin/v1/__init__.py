"""plugin.v1: the forge plugin protocol, version 1.

Messages live in ``plugin.v1.plugin_pb2`` and gRPC stubs in
``plugin.v1.plugin_pb2_grpc``, both generated from proto/plugin/v1/plugin.proto.
"""
