"""The local pages of `benchsmith label` and `benchsmith review`: a small HTTP server (the standard
library's, bound to loopback unless asked) and the pages' static HTML, JavaScript and CSS, shipped
in the package: no CDN, no build step, nothing fetched from the network."""
