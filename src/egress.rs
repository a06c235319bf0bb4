//! Where Quell may send a webhook: not inside the network it runs in — loopback, private and
//! link-local ranges, the cloud metadata address, "this host" (`0.0.0.0`) — unless an admin
//! listed the place in `QUELL_WEBHOOK_ALLOW`. Anyone may give a contact method a URL, so
//! without this rule a viewer could make Quell post signed pages to its own API, to
//! PostgreSQL's port or to a metadata service, and read back which answered. Pure rules; the
//! sender resolves names through them (`notify::sender`), so a name that resolves inside the
//! network is refused at each send, whatever it resolved to when it was saved.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Internal places an admin lets webhooks reach: host names, addresses and networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allow {
    hosts: Vec<String>,
    nets: Vec<(IpAddr, u8)>,
}

impl Allow {
    /// `QUELL_WEBHOOK_ALLOW`: comma-separated host names (`hooks.internal`), addresses
    /// (`127.0.0.1`, `::1`) and networks (`10.20.0.0/16`, `fd00::/8`).
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut allow = Self::default();
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if let Some((addr, bits)) = item.split_once('/') {
                let ip: IpAddr = addr
                    .parse()
                    .map_err(|_| format!("{item:?}: {addr:?} is not an IP address"))?;
                let max = if ip.is_ipv4() { 32 } else { 128 };
                let bits: u8 = bits
                    .parse()
                    .ok()
                    .filter(|b| *b <= max)
                    .ok_or_else(|| format!("{item:?}: the prefix length must be 0 to {max}"))?;
                allow.nets.push((ip, bits));
            } else if let Ok(ip) = item.trim_matches(['[', ']']).parse::<IpAddr>() {
                allow.nets.push((ip, if ip.is_ipv4() { 32 } else { 128 }));
            } else if is_host_name(item) {
                allow.hosts.push(item.to_ascii_lowercase());
            } else {
                return Err(format!(
                    "{item:?} is not a host name, an IP address or a network like 10.0.0.0/8"
                ));
            }
        }
        Ok(allow)
    }

    /// Whether the admin listed this host name (exactly, ignoring case).
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Whether the admin listed this address or a network holding it.
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.nets
            .iter()
            .any(|(net, bits)| within(ip, canonical(*net), *bits))
    }

    /// Whether a message may go to `ip`, reached under the name `host`.
    pub fn may_reach(&self, host: &str, ip: IpAddr) -> bool {
        !is_internal(ip) || self.allows_ip(ip) || self.allows_host(host)
    }
}

fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => ip,
        },
        v4 => v4,
    }
}

fn within(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Whether `ip` is inside the network rather than on the internet: loopback, private,
/// link-local (the metadata service at 169.254.169.254 among them), shared (100.64/10),
/// unspecified ("this host"), broadcast, multicast, reserved, and their IPv6 kin (unique-local,
/// link-local, IPv4-mapped and NAT64 forms of the above).
pub fn is_internal(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let v4_at = |hi: u16, lo: u16| {
        internal_v4(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        ))
    };
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        // Local-use NAT64 (64:ff9b:1::/48) translates to whatever the network chooses.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        // Forms that carry an IPv4 address: NAT64 (64:ff9b::/96), IPv4-compatible (::/96),
        // IPv4-translated (::ffff:0:0:0/96) in the last 32 bits; 6to4 (2002::/16) in bits 16-48.
        || ((s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4])
            || s[0..6] == [0; 6]
            || s[0..4] == [0; 4] && s[4] == 0xffff && s[5] == 0)
            && v4_at(s[6], s[7])
        || s[0] == 0x2002 && v4_at(s[1], s[2])
}

/// Names that mean this machine whatever DNS says (RFC 6761).
pub fn is_local_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// Why a webhook's URL is refused, or nothing. Literal addresses (in any spelling the URL
/// standard reads — `http://2130706433/` is `127.0.0.1`, `http://0/` is `0.0.0.0`) and local
/// names are judged here; other names when the sender resolves them.
pub fn refusal(url: &str, allow: &Allow) -> Option<String> {
    let parsed = match url::Url::parse(url) {
        Ok(u) => u,
        Err(e) => return Some(format!("not a URL ({e})")),
    };
    let inside = |what: &str| {
        Some(format!(
            "{what} is inside this network; webhooks go to public addresses unless an admin \
             lists the place in QUELL_WEBHOOK_ALLOW"
        ))
    };
    match parsed.host() {
        None => Some("the URL names no host".into()),
        Some(url::Host::Ipv4(v4)) if !allow.may_reach("", IpAddr::V4(v4)) => {
            inside(&v4.to_string())
        }
        Some(url::Host::Ipv6(v6)) if !allow.may_reach("", IpAddr::V6(v6)) => {
            inside(&v6.to_string())
        }
        Some(url::Host::Domain(d)) if is_local_name(d) && !allow.allows_host(d) => inside(d),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_inside_the_network_are_told_from_public_ones() {
        for inside in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "::ffff:0:7f00:1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
        ] {
            assert!(is_internal(ip(inside)), "{inside} is inside");
        }
        for public in [
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:808:808::1",
        ] {
            assert!(!is_internal(ip(public)), "{public} is public");
        }
    }

    #[test]
    fn urls_naming_inside_addresses_in_any_spelling_are_refused() {
        let none = Allow::default();
        for url in [
            "http://127.0.0.1:5432/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0/",
            "http://[::1]:3000/api/v1",
            "http://169.254.169.254/latest/meta-data/",
            "http://localhost:3000/",
            "http://api.localhost/",
            "http://10.0.0.5/hook",
        ] {
            let why = refusal(url, &none).unwrap_or_else(|| panic!("{url} refused"));
            assert!(why.contains("QUELL_WEBHOOK_ALLOW"), "{why}");
        }
        assert_eq!(
            refusal("https://hooks.slack.com/services/T0/B0/x", &none),
            None
        );
        assert_eq!(refusal("https://93.184.216.34/hook", &none), None);
        assert_eq!(
            refusal("https://internal.example.com/hook", &none),
            None,
            "names are judged when they are resolved"
        );
    }

    #[test]
    fn an_admins_list_lets_named_places_in_and_nothing_else() {
        let allow = Allow::parse("127.0.0.1, 10.20.0.0/16,hooks.internal, fd00::/8").unwrap();
        assert_eq!(refusal("http://127.0.0.1:9000/", &allow), None);
        assert!(refusal("http://127.0.0.2:9000/", &allow).is_some());
        assert!(allow.may_reach("x", ip("10.20.3.4")));
        assert!(!allow.may_reach("x", ip("10.21.3.4")));
        assert!(allow.may_reach("x", ip("::ffff:10.20.0.9")));
        assert!(allow.may_reach("x", ip("fd12::1")));
        assert!(allow.may_reach("HOOKS.internal.", ip("10.99.0.1")));
        assert!(!allow.may_reach("other.internal", ip("10.99.0.1")));
        assert!(Allow::parse("10.0.0.0/33").is_err());
        assert!(Allow::parse("http://x/").is_err());
        assert_eq!(Allow::parse(" , ").unwrap(), Allow::default());
    }
}
