//! Certificates made at test time (rcgen): none are committed.

/// A CA, and a server certificate and a client certificate signed by it, as PEM files.
pub struct Pki {
    dir: tempfile::TempDir,
    ca: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

impl Pki {
    pub fn new() -> Self {
        use rcgen::{
            BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa,
            KeyPair,
        };
        let dir = tempfile::tempdir().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let mut ca_name = DistinguishedName::new();
        ca_name.push(DnType::CommonName, "sluice test CA");
        ca_params.distinguished_name = ca_name;
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("ca.pem", &ca.pem());

        let server_key = KeyPair::generate().unwrap();
        let server_params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        let server = server_params.signed_by(&server_key, &ca).unwrap();
        // Kafka's PEM keystore: the key and the chain in one file.
        write(
            "server.pem",
            &format!("{}{}", server_key.serialize_pem(), server.pem()),
        );

        let client_key = KeyPair::generate().unwrap();
        let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut client_name = DistinguishedName::new();
        client_name.push(DnType::OrganizationName, "Acme");
        client_name.push(DnType::CommonName, "alice");
        client_params.distinguished_name = client_name;
        let client = client_params.signed_by(&client_key, &ca).unwrap();
        write("client.pem", &client.pem());
        write("client.key", &client_key.serialize_pem());
        Self { dir, ca }
    }

    /// Another server keystore (PEM key and chain) signed by the same CA, written to `name`:
    /// a renewed certificate (the same names) or a different one.
    pub fn server_keystore(
        &self,
        name: &str,
        alt_names: &[&str],
        common_name: Option<&str>,
    ) -> String {
        use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(alt_names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        if let Some(cn) = common_name {
            let mut dn = DistinguishedName::new();
            dn.push(DnType::CommonName, cn);
            params.distinguished_name = dn;
        }
        let certificate = params.signed_by(&key, &self.ca).unwrap();
        let path = self.path(name);
        std::fs::write(
            &path,
            format!("{}{}", key.serialize_pem(), certificate.pem()),
        )
        .unwrap();
        path
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}
