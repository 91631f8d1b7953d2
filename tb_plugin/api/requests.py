"""Request parameters of endpoints, as the doors read them: the one decoder lives below the
views (`analysis/core/requests.py`), beside the request types' folders; named here too."""

from ..analysis.core.requests import NoParams, Params, decode_request, request_fields

__all__ = ["NoParams", "Params", "decode_request", "request_fields"]
