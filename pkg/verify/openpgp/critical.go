package openpgp

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// knownSubpackets are the signature subpacket types go-crypto interprets
// (RFC 9580 5.2.3.7). A critical subpacket of any other type makes a
// signature invalid; go-crypto refuses one in the hashed area itself, but
// reads only issuer, fingerprint and embedded signature subpackets in the
// unhashed area and drops the rest with their critical bit.
var knownSubpackets = map[byte]bool{2: true, 3: true, 4: true, 5: true, 6: true, 9: true, 11: true, 16: true,
	20: true, 21: true, 22: true, 23: true, 24: true, 25: true, 26: true, 27: true, 28: true, 29: true, 30: true,
	32: true, 33: true, 35: true, 39: true}

// criticalProblem says what s carries, in either subpacket area, that is
// marked critical and that updeb does not understand: any notation (updeb
// acts on none), or a subpacket of an unknown type. RFC 9580 5.2.3.7 and
// 5.2.3.24 (RFC 4880 5.2.3.1, 5.2.3.16): such a signature is invalid. gpgv
// refuses both areas' critical unknowns too; sqv reads only the hashed area.
// gpgv alone also accepts the two critical notations it implements
// (pka-address@gnupg.org, preferred-email-encoding@pgp.com). "" when
// there is nothing critical that is unknown.
func criticalProblem(s *packet.Signature) string {
	for _, n := range s.Notations { // the hashed area's
		if n.IsCritical {
			return criticalNotation(n.Name)
		}
	}
	var b bytes.Buffer
	if err := s.Serialize(&b); err != nil {
		return "" // only a signature that was never made fails to serialize
	}
	_, unhashed, ok := subpacketAreas(b.Bytes())
	if !ok {
		return "damaged subpacket areas"
	}
	for len(unhashed) > 0 {
		body, rest, ok := nextSubpacket(unhashed)
		if !ok {
			return "damaged unhashed subpacket area"
		}
		unhashed = rest
		typ, critical := body[0]&0x7f, body[0]&0x80 != 0
		switch {
		case !critical:
		case typ == 20:
			name := ""
			if len(body) >= 9 {
				n := int(binary.BigEndian.Uint16(body[5:7]))
				name = string(body[9:min(9+n, len(body))])
			}
			return criticalNotation(name) + " in the unhashed area"
		case !knownSubpackets[typ]:
			return fmt.Sprintf("carries an unknown critical signature subpacket type %d in the unhashed area: such a signature is invalid (RFC 9580 5.2.3.7)", typ)
		}
	}
	return ""
}

func criticalNotation(name string) string {
	return fmt.Sprintf("carries the critical notation %q, which updeb does not understand: a signature with an unknown critical notation is invalid (RFC 9580 5.2.3.7)", name)
}

// subpacketAreas returns the hashed and unhashed subpacket areas of a
// serialized signature packet (new-format header, version 4 or 6).
func subpacketAreas(p []byte) (hashed, unhashed []byte, ok bool) {
	if len(p) < 2 || p[0] != 0xc2 {
		return nil, nil, false
	}
	var body []byte
	switch l := p[1]; {
	case l < 192:
		body = p[2:]
	case l < 224 && len(p) >= 3:
		body = p[3:]
	case l == 255 && len(p) >= 6:
		body = p[6:]
	default:
		return nil, nil, false
	}
	if len(body) < 4 {
		return nil, nil, false
	}
	width := 2
	if body[0] == 6 {
		width = 4
	}
	area := func(b []byte) ([]byte, []byte, bool) {
		if len(b) < width {
			return nil, nil, false
		}
		n := int(binary.BigEndian.Uint16(b[width-2 : width]))
		if width == 4 {
			n = int(binary.BigEndian.Uint32(b[:4]))
		}
		if n > len(b)-width {
			return nil, nil, false
		}
		return b[width : width+n], b[width+n:], true
	}
	hashed, rest, ok := area(body[4:])
	if !ok {
		return nil, nil, false
	}
	unhashed, _, ok = area(rest)
	return hashed, unhashed, ok
}

// nextSubpacket splits off the first subpacket: its type byte and data.
func nextSubpacket(b []byte) (body, rest []byte, ok bool) {
	var n, hdr int
	switch {
	case b[0] < 192:
		n, hdr = int(b[0]), 1
	case b[0] < 255 && len(b) >= 2:
		n, hdr = int(b[0]-192)<<8+int(b[1])+192, 2
	case b[0] == 255 && len(b) >= 5:
		n, hdr = int(binary.BigEndian.Uint32(b[1:5])), 5
	default:
		return nil, nil, false
	}
	if n < 1 || n > len(b)-hdr {
		return nil, nil, false
	}
	return b[hdr : hdr+n], b[hdr+n:], true
}
