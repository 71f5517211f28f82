//! The typed exports of a component, per contract version: which extension
//! points it has, resolved once per component ([`Indices`]) and loaded per
//! instance ([`Exports`]).

/// Declares `Indices` and `Exports` for one contract version's generated
/// guest module: `plugin` plus one optional field per extension point.
macro_rules! version_exports {
    ($guest:ident; $($field:ident: $point:ident => $module:ident),* $(,)?) => {
        /// Export lookups resolved once per component.
        pub struct Indices {
            plugin: $guest::plugin::GuestIndices,
            $($field: Option<$guest::$module::GuestIndices>,)*
        }

        /// The typed exports of one live instance.
        pub struct Exports {
            /// `plugin`.
            pub plugin: $guest::plugin::Guest,
            $(
                #[doc = concat!("`", stringify!($module), "`, if wired.")]
                pub $field: Option<$guest::$module::Guest>,
            )*
        }

        impl Indices {
            /// Resolves `plugin` and the exports of `points`.
            pub fn new(
                pre: &wasmtime::component::InstancePre<super::state::HostState>,
                points: &[crate::framework::ExtensionPoint],
            ) -> wasmtime::Result<Self> {
                let has = |p| points.contains(&p);
                Ok(Self {
                    plugin: $guest::plugin::GuestIndices::new(pre)?,
                    $($field: has(crate::framework::ExtensionPoint::$point)
                        .then(|| $guest::$module::GuestIndices::new(pre))
                        .transpose()?,)*
                })
            }

            /// The exports of a new instance.
            pub fn load(
                &self,
                store: &mut wasmtime::Store<super::state::HostState>,
                instance: &wasmtime::component::Instance,
            ) -> wasmtime::Result<Exports> {
                Ok(Exports {
                    plugin: self.plugin.load(&mut *store, instance)?,
                    $($field: self
                        .$field
                        .as_ref()
                        .map(|x| x.load(&mut *store, instance))
                        .transpose()?,)*
                })
            }
        }
    };
}
pub(super) use version_exports;
