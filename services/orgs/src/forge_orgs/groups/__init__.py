"""HTTP handlers: parse the request, call the operation, render the answer."""
