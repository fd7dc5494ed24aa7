//! The `sasl.jaas.config` property in Kafka's format (one JAAS login module):
//!
//! ```text
//! org.apache.kafka.common.security.plain.PlainLoginModule required
//!     username="admin" password="admin-secret" user_alice="alice-secret";
//! ```
//!
//! Only what the broker reads is kept: the login module's class and its options. Values may be
//! quoted (with `\"` and `\\` inside) or bare words. Error messages never repeat a value, since
//! values are passwords.
//!
//! A static JAAS file (Kafka's `-Djava.security.auth.login.config`) holds named sections of
//! modules — `KafkaServer { ...; ...; };` — with `//` and `/* */` comments: [`parse_file`].

use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum JaasError {
    #[error("sasl.jaas.config: {0}")]
    Syntax(&'static str),
    #[error("sasl.jaas.config must hold exactly one login module, found {0}")]
    ModuleCount(usize),
    #[error("JAAS file: {0}")]
    File(&'static str),
}

/// One login module entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasModule {
    pub class: String,
    pub options: BTreeMap<String, String>,
}

impl JaasModule {
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// The module as a `sasl.jaas.config` value ([`parse`] reads it back).
    pub fn to_config(&self) -> String {
        let mut text = format!("{} required", self.class);
        for (key, value) in &self.options {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            text.push_str(&format!(" {key}=\"{escaped}\""));
        }
        text.push(';');
        text
    }
}

const FLAGS: [&str; 4] = ["required", "requisite", "sufficient", "optional"];

/// Parses a `sasl.jaas.config` value holding one login module.
pub fn parse(text: &str) -> Result<JaasModule, JaasError> {
    let tokens = tokenize(text)?;
    let mut tokens = tokens.into_iter().peekable();
    let mut modules = modules(&mut tokens)?;
    if tokens.next().is_some() {
        return Err(JaasError::Syntax("unexpected '{' or '}'"));
    }
    match modules.len() {
        1 => Ok(modules.remove(0)),
        n => Err(JaasError::ModuleCount(n)),
    }
}

/// Parses a static JAAS file: section name -> its login modules.
pub fn parse_file(text: &str) -> Result<BTreeMap<String, Vec<JaasModule>>, JaasError> {
    let mut tokens = tokenize(text)?.into_iter().peekable();
    let mut sections = BTreeMap::new();
    while let Some(token) = tokens.next() {
        let Token::Word(name) = token else {
            return Err(JaasError::File("expected a section name"));
        };
        if tokens.next() != Some(Token::Open) {
            return Err(JaasError::File("expected '{' after a section name"));
        }
        let modules = modules(&mut tokens)?;
        if tokens.next() != Some(Token::Close) {
            return Err(JaasError::File("expected '}' closing a section"));
        }
        if tokens.peek() == Some(&Token::Semicolon) {
            tokens.next();
        }
        sections.insert(name, modules);
    }
    Ok(sections)
}

/// Login modules up to the end of the text or a section's '}' (left unread).
fn modules(
    tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
) -> Result<Vec<JaasModule>, JaasError> {
    let mut modules = Vec::new();
    while tokens
        .peek()
        .is_some_and(|t| !matches!(t, Token::Open | Token::Close))
    {
        let Some(Token::Word(class)) = tokens.next() else {
            return Err(JaasError::Syntax("expected a login module class name"));
        };
        match tokens.next() {
            Some(Token::Word(flag)) if FLAGS.contains(&flag.to_ascii_lowercase().as_str()) => {}
            _ => {
                return Err(JaasError::Syntax(
                    "expected a control flag (required, requisite, sufficient, optional)",
                ));
            }
        }
        let mut options = BTreeMap::new();
        loop {
            match tokens.next() {
                Some(Token::Semicolon) => break,
                Some(Token::Word(key)) => {
                    if tokens.next() != Some(Token::Equals) {
                        return Err(JaasError::Syntax("expected '=' after an option name"));
                    }
                    let value = match tokens.next() {
                        Some(Token::Word(value)) | Some(Token::Quoted(value)) => value,
                        _ => return Err(JaasError::Syntax("expected an option value")),
                    };
                    options.insert(key, value);
                }
                _ => return Err(JaasError::Syntax("expected an option or ';'")),
            }
        }
        modules.push(JaasModule { class, options });
    }
    Ok(modules)
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<Token>, JaasError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '/' => {
                chars.next();
                match chars.next() {
                    Some('/') => {
                        for c in chars.by_ref() {
                            if c == '\n' {
                                break;
                            }
                        }
                    }
                    Some('*') => {
                        let mut previous = ' ';
                        loop {
                            match chars.next() {
                                Some('/') if previous == '*' => break,
                                Some(c) => previous = c,
                                None => return Err(JaasError::Syntax("unterminated comment")),
                            }
                        }
                    }
                    _ => return Err(JaasError::Syntax("unexpected '/'")),
                }
            }
            '{' => {
                chars.next();
                tokens.push(Token::Open);
            }
            '}' => {
                chars.next();
                tokens.push(Token::Close);
            }
            '=' => {
                chars.next();
                tokens.push(Token::Equals);
            }
            ';' => {
                chars.next();
                tokens.push(Token::Semicolon);
            }
            '"' | '\'' => {
                let quote = c;
                chars.next();
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some('\\') => match chars.next() {
                            Some(escaped) => value.push(escaped),
                            None => return Err(JaasError::Syntax("unterminated quoted value")),
                        },
                        Some(c) if c == quote => break,
                        Some(c) => value.push(c),
                        None => return Err(JaasError::Syntax("unterminated quoted value")),
                    }
                }
                tokens.push(Token::Quoted(value));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '=' | ';' | '"' | '\'' | '{' | '}') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_plain_login_module_with_users() {
        let module = parse(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required
               username="admin" password="admin-secret"
               user_admin="admin-secret" user_alice='al"ice' user_bob="b\"ob";"#,
        )
        .unwrap();
        assert_eq!(
            module.class,
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        );
        assert_eq!(module.option("username"), Some("admin"));
        assert_eq!(module.option("user_alice"), Some("al\"ice"));
        assert_eq!(module.option("user_bob"), Some("b\"ob"));
        let bare =
            parse("Module optional unsecuredLoginStringClaim_sub=thePrincipalName;").unwrap();
        assert_eq!(
            bare.option("unsecuredLoginStringClaim_sub"),
            Some("thePrincipalName")
        );
    }

    #[test]
    fn static_jaas_files_have_sections_of_modules() {
        let sections = parse_file(
            r#"
            // Kafka's example
            KafkaServer {
                org.apache.kafka.common.security.plain.PlainLoginModule required
                username="admin" password="admin-secret" user_admin="admin-secret";
                org.apache.kafka.common.security.scram.ScramLoginModule required;
            };
            /* per listener */
            sasl_ssl.KafkaServer { Module required a="b\"c"; };
            Client { };
            "#,
        )
        .unwrap();
        assert_eq!(sections.len(), 3);
        assert_eq!(sections["KafkaServer"].len(), 2);
        assert_eq!(
            sections["KafkaServer"][0].option("user_admin"),
            Some("admin-secret")
        );
        let module = &sections["sasl_ssl.KafkaServer"][0];
        assert_eq!(&parse(&module.to_config()).unwrap(), module);
        for bad in [
            "KafkaServer { M required; ",
            "KafkaServer M required; };",
            "{ M required; };",
            "KafkaServer { M required; }; /* open",
        ] {
            assert!(parse_file(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn malformed_configs_are_refused_without_echoing_values() {
        for text in [
            "Module required username=\"x\"",
            "Module username=\"x\";",
            "Module required username;",
            "Module required password=\"secret",
            "",
            "A required; B required;",
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(!error.contains("secret"), "{error}");
        }
    }
}
