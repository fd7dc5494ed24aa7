//! Who a connection is: Kafka's `KafkaPrincipal` (`User:alice`) as
//! `DefaultKafkaPrincipalBuilder` builds it — the SASL authorization id, the mapped subject of a
//! TLS client certificate, or `User:ANONYMOUS` — and `ssl.principal.mapping.rules`, Kafka's
//! `SslPrincipalMapper`: `RULE:pattern/replacement/[LU]` entries and `DEFAULT`, the first rule
//! whose pattern matches the whole distinguished name wins, none matching is an error.

use regex::Regex;
use std::fmt;
use thiserror::Error;

/// A principal: its type (always `User` for the built-in builders) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KafkaPrincipal {
    pub principal_type: String,
    pub name: String,
}

impl KafkaPrincipal {
    pub const USER_TYPE: &'static str = "User";

    pub fn user(name: impl Into<String>) -> Self {
        Self {
            principal_type: Self::USER_TYPE.to_string(),
            name: name.into(),
        }
    }

    /// Kafka's `User:ANONYMOUS`: PLAINTEXT connections and TLS clients without a certificate.
    pub fn anonymous() -> Self {
        Self::user("ANONYMOUS")
    }

    /// Parses `Type:name` (ACL principals, `super.users`); the name may contain colons.
    pub fn parse(text: &str) -> Option<Self> {
        let (principal_type, name) = text.split_once(':')?;
        if principal_type.is_empty() {
            return None;
        }
        Some(Self {
            principal_type: principal_type.to_string(),
            name: name.to_string(),
        })
    }
}

impl fmt::Display for KafkaPrincipal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MappingError {
    #[error("invalid rule in ssl.principal.mapping.rules: '{0}'")]
    InvalidRule(String),
    #[error("no rule of ssl.principal.mapping.rules applies to the name '{0}'")]
    NoRuleApplies(String),
}

#[derive(Debug, Clone)]
enum Rule {
    Default,
    Replace {
        /// The pattern anchored at both ends: a rule applies only to a whole match, as Java's
        /// `Matcher.matches()`.
        whole: Regex,
        pattern: Regex,
        replacement: String,
        case: Case,
    },
}

#[derive(Debug, Clone, Copy)]
enum Case {
    Keep,
    Lower,
    Upper,
}

/// `ssl.principal.mapping.rules`, parsed.
#[derive(Debug, Clone)]
pub struct PrincipalMapper {
    rules: Vec<Rule>,
}

impl Default for PrincipalMapper {
    fn default() -> Self {
        Self {
            rules: vec![Rule::Default],
        }
    }
}

impl PrincipalMapper {
    /// Parses the property's value: rules separated by commas (a comma inside a rule's
    /// pattern or replacement belongs to the rule, as in Kafka's parser).
    pub fn parse(text: &str) -> Result<Self, MappingError> {
        let mut rules = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("DEFAULT") {
                rules.push(Rule::Default);
                rest = after;
            } else if let Some(after) = rest.strip_prefix("RULE:") {
                let (pattern, after) = split_unescaped_slash(after)
                    .ok_or_else(|| MappingError::InvalidRule(rest.to_string()))?;
                let (replacement, after) = split_unescaped_slash(after)
                    .ok_or_else(|| MappingError::InvalidRule(rest.to_string()))?;
                let (case, after) = match after.chars().next() {
                    Some('L') => (Case::Lower, &after[1..]),
                    Some('U') => (Case::Upper, &after[1..]),
                    _ => (Case::Keep, after),
                };
                let pattern = pattern.replace("\\/", "/");
                let invalid = |_| MappingError::InvalidRule(pattern.clone());
                rules.push(Rule::Replace {
                    whole: Regex::new(&format!("^(?:{pattern})$")).map_err(invalid)?,
                    pattern: Regex::new(&pattern).map_err(invalid)?,
                    replacement: java_replacement(&replacement.replace("\\/", "/")),
                    case,
                });
                rest = after;
            } else {
                return Err(MappingError::InvalidRule(rest.to_string()));
            }
            rest = rest.trim_start();
            match rest.strip_prefix(',') {
                Some(after) => rest = after.trim_start(),
                None if rest.is_empty() => {}
                None => return Err(MappingError::InvalidRule(rest.to_string())),
            }
        }
        if rules.is_empty() {
            rules.push(Rule::Default);
        }
        Ok(Self { rules })
    }

    /// The principal name of a certificate subject (RFC 2253 form, as Java prints it).
    pub fn map(&self, distinguished_name: &str) -> Result<String, MappingError> {
        for rule in &self.rules {
            match rule {
                Rule::Default => return Ok(distinguished_name.to_string()),
                Rule::Replace {
                    whole,
                    pattern,
                    replacement,
                    case,
                } => {
                    if !whole.is_match(distinguished_name) {
                        continue;
                    }
                    let mapped = pattern
                        .replace_all(distinguished_name, replacement.as_str())
                        .into_owned();
                    return Ok(match case {
                        Case::Keep => mapped,
                        Case::Lower => mapped.to_lowercase(),
                        Case::Upper => mapped.to_uppercase(),
                    });
                }
            }
        }
        Err(MappingError::NoRuleApplies(distinguished_name.to_string()))
    }
}

/// Splits at the first `/` not preceded by a backslash.
fn split_unescaped_slash(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'/' => return Some((&text[..i], &text[i + 1..])),
            _ => i += 1,
        }
    }
    None
}

/// Java's `$1` group references as the regex crate's `${1}` (which would read `$1a` as a
/// group named `1a`); `\$` stays a literal dollar.
fn java_replacement(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            '$' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    out.push_str("$$");
                } else {
                    out.push_str(&format!("${{{digits}}}"));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A certificate subject in RFC 2253 form, as Java's `X500Principal.getName()` prints it
/// (what Kafka's mapping rules are written against): the last RDN first, `,` between RDNs and
/// `+` within one, known attribute types by short name, others as dotted OIDs with `#`-hex
/// values, special characters escaped.
pub fn rfc2253_name(name: &x509_parser::x509::X509Name<'_>) -> String {
    use x509_parser::der_parser::oid;
    let short = |oid: &x509_parser::der_parser::oid::Oid<'_>| -> Option<&'static str> {
        let known = [
            (oid!(2.5.4.3), "CN"),
            (oid!(2.5.4.6), "C"),
            (oid!(2.5.4.7), "L"),
            (oid!(2.5.4.8), "ST"),
            (oid!(2.5.4.9), "STREET"),
            (oid!(2.5.4.10), "O"),
            (oid!(2.5.4.11), "OU"),
            (oid!(0.9.2342.19200300.100.1.25), "DC"),
            (oid!(0.9.2342.19200300.100.1.1), "UID"),
        ];
        known
            .into_iter()
            .find(|(known, _)| known == oid)
            .map(|(_, name)| name)
    };
    let rdns: Vec<String> = name
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|attribute| {
                    let value = attribute.as_str().ok();
                    match (short(attribute.attr_type()), value) {
                        (Some(short), Some(value)) => format!("{short}={}", escape_rfc2253(value)),
                        _ => {
                            let hex: String = attribute
                                .attr_value()
                                .as_bytes()
                                .iter()
                                .map(|b| format!("{b:02x}"))
                                .collect();
                            format!("{}=#{hex}", attribute.attr_type().to_id_string())
                        }
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.into_iter().rev().collect::<Vec<_>>().join(",")
}

fn escape_rfc2253(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let last = value.chars().count().saturating_sub(1);
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';' | '=')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_parse_and_print_as_kafka_writes_them() {
        let p = KafkaPrincipal::parse("User:CN=a:b").unwrap();
        assert_eq!(p.principal_type, "User");
        assert_eq!(p.name, "CN=a:b");
        assert_eq!(p.to_string(), "User:CN=a:b");
        assert!(KafkaPrincipal::parse("alice").is_none());
        assert!(KafkaPrincipal::parse(":alice").is_none());
        assert_eq!(KafkaPrincipal::anonymous().to_string(), "User:ANONYMOUS");
    }

    /// The rules of Kafka's `SslPrincipalMapperTest`.
    #[test]
    fn mapping_rules_behave_as_kafkas_ssl_principal_mapper() {
        let mapper = PrincipalMapper::parse(
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT",
        )
        .unwrap();
        assert_eq!(
            mapper
                .map("CN=kafka1,OU=ServiceUsers,O=Org,L=Santa Clara,ST=CA,C=US")
                .unwrap(),
            "kafka1"
        );
        assert_eq!(
            mapper
                .map("CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Cupertino,ST=CA,C=US")
                .unwrap(),
            "duke@javasoft"
        );
        assert_eq!(
            mapper.map("OU=JavaSoft,O=Sun,cn=client1,C=US").unwrap(),
            "CLIENT1"
        );
        assert_eq!(mapper.map("OU=none").unwrap(), "OU=none");
        assert_eq!(
            PrincipalMapper::parse("").unwrap().map("CN=x").unwrap(),
            "CN=x"
        );
        let strict = PrincipalMapper::parse("RULE:^CN=(.*)$/$1/").unwrap();
        assert_eq!(
            strict.map("OU=x"),
            Err(MappingError::NoRuleApplies("OU=x".into()))
        );
        assert!(PrincipalMapper::parse("RULE:^CN=(.*)$").is_err());
        assert!(PrincipalMapper::parse("DEFAULT,junk").is_err());
        assert!(PrincipalMapper::parse("RULE:([/$1/").is_err());
        // Escaped slashes and a literal dollar.
        let escaped = PrincipalMapper::parse(r"RULE:^CN=(.*)\/(.*)$/$1\$$2/").unwrap();
        assert_eq!(escaped.map("CN=a/b").unwrap(), "a$b");
    }

    #[test]
    fn subjects_print_in_rfc2253_form() {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CountryName, "US");
        dn.push(rcgen::DnType::OrganizationName, "Acme, Inc");
        dn.push(rcgen::DnType::OrganizationalUnitName, "eng");
        dn.push(rcgen::DnType::CommonName, "alice");
        params.distinguished_name = dn;
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let (_, parsed) = x509_parser::parse_x509_certificate(cert.der()).unwrap();
        assert_eq!(
            rfc2253_name(parsed.subject()),
            r"CN=alice,OU=eng,O=Acme\, Inc,C=US"
        );
    }
}
