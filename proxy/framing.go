package proxy

import (
	"bytes"
	"net/http"

	"github.com/sluicehq/sluice/internal/apierr"
)

// checkFraming refuses the header blocks that request smuggling is made
// of, which fasthttp's parser accepts: a folded (obs-fold) line, a line
// ended by a bare LF, Content-Length together with Transfer-Encoding, and
// a Transfer-Encoding other than exactly "chunked". A proxy in front of
// Sluice may read such a request's length differently, so what it takes
// for the next request would be the rest of this one. raw is the header
// block as received (RequestHeader.RawHeaders: the lines after the request
// line, through the empty line); it is empty for requests built in
// process. The caller closes the connection, whose remaining bytes cannot
// be trusted to start a request.
func checkFraming(raw []byte) *apierr.Error {
	contentLength, transferEncoding := false, false
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			return framingError("the header block does not end with an empty line")
		}
		line := raw[:i+1]
		raw = raw[i+1:]
		if i == 0 || line[i-1] != '\r' {
			return framingError("a header line ends with a bare LF; lines must end with CRLF")
		}
		if i == 1 {
			break // the empty line that ends the block
		}
		if line[0] == ' ' || line[0] == '\t' {
			return framingError("a header line is folded (starts with whitespace); obsolete line folding is not accepted")
		}
		name, value, ok := bytes.Cut(line[:i-1], []byte(":"))
		if !ok {
			continue // fasthttp refuses these itself
		}
		switch {
		case bytes.EqualFold(name, []byte("content-length")):
			contentLength = true
		case bytes.EqualFold(name, []byte("transfer-encoding")):
			if transferEncoding {
				return framingError("Transfer-Encoding is sent twice")
			}
			transferEncoding = true
			if !bytes.EqualFold(bytes.Trim(value, " \t"), []byte("chunked")) {
				return framingError("Transfer-Encoding must be exactly \"chunked\"")
			}
		}
	}
	if contentLength && transferEncoding {
		return framingError("a request may not have both Content-Length and Transfer-Encoding")
	}
	return nil
}

func framingError(msg string) *apierr.Error {
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "%s", msg)
}
