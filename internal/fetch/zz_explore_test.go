package fetch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestExploreBig(t *testing.T) {
	cases := map[string]string{
		"flat spans": "<html><body><article>" + strings.Repeat("<p><span>ab</span> <b>c</b></p>", 5<<20/32) + "</article></body></html>",
		"deep divs":  "<html><body>" + strings.Repeat("<div>x", 5<<20/6) + "</body></html>",
		"table":      "<html><body><table>" + strings.Repeat("<tr><td>cell one</td><td>cell two</td></tr>", 5<<20/44) + "</table></body></html>",
	}
	for name, body := range cases {
		st := time.Now()
		_, md, err := Extract([]byte(body), "http://x.test/")
		fmt.Println(name, len(body), len(md), err, time.Since(st))
	}
}
